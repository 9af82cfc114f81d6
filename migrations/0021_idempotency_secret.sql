-- Idempotency keys are hashed, and their kept answers encrypted, under IDEMPOTENCY_SECRET from
-- now on (src/platform/http/idempotency.ts): key_hash and fingerprint are HMAC-SHA-256 under it,
-- and response_body is sealed with a key derived from it, the scope and the Idempotency-Key,
-- bound to its scope and key_hash. Rows kept before were hashed and sealed with the key alone:
-- no lookup finds them any more, and whoever guesses a key could open their answers. They are
-- deleted, as if expired; a retry, after the upgrade, of a request answered before it does the
-- work again.
delete from idempotency_keys;
