-- Issue 39 point 6: an app may have its license tokens, license files and revocation lists signed
-- with Ed25519 (JWS alg EdDSA) instead of RS256 (docs/licenses.md, "Signing algorithm"). Apps made
-- before it, and apps that do not choose, keep RS256.
alter table apps add column token_algorithm text not null default 'RS256'
  check (token_algorithm in ('RS256', 'EdDSA'));

-- The key ring holds a key of each algorithm for each purpose; a rotation replaces the keys of
-- its purpose and algorithm only. Every key before this is an RSA key.
alter table signing_keys add column algorithm text not null default 'RS256'
  check (algorithm in ('RS256', 'EdDSA'));
alter table signing_keys alter column algorithm drop default;
