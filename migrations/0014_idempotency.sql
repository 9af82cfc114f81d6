-- Idempotency keys (src/platform/http/idempotency.ts): the first answer to a creating POST sent
-- with an Idempotency-Key, so a retry with the same key gets that answer instead of doing the
-- work again, on whichever node it lands. A row is claimed (in_progress) before the work and
-- completed (done) with the answer; a failed attempt deletes its claim. Rows live 24 hours.
--
-- scope: whose key space (`seller:<user id>` for a signed-in seller or their API keys,
--   `public` for routes without credentials). key_hash: SHA-256 of the key; the key itself is
--   never stored, and the stored body is encrypted with a key derived from it, so the table
--   alone does not give back the secrets some answers carry (a new API key).
-- fingerprint: SHA-256 of the request (method, route, path and query values, canonical body).
-- app_id: the app an API key that made the request is limited to (null: a seller's session),
--   so an answer is never replayed to a credential that could not have had it.
-- claim_id: which attempt holds an in_progress claim, so a late finisher never overwrites the
--   claim of an attempt that took a stale one over.
create table idempotency_keys (
  scope text not null,
  key_hash text not null,
  fingerprint text not null,
  app_id uuid,
  state text not null check (state in ('in_progress', 'done')),
  claim_id uuid not null,
  status_code integer,
  content_type text,
  response_body text,
  request_id text,
  created_at timestamptz not null,
  primary key (scope, key_hash)
);

-- The purge job deletes by age.
create index idempotency_keys_created_idx on idempotency_keys (created_at);
