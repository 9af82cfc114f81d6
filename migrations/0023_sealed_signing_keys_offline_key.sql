-- Issue 38: signing keys sealed at rest, a long-lived offline key for what offline machines rely
-- on, and revocation lists whose version only grows (docs/security.md, "Signing keys and offline
-- trust").

-- A private key is kept sealed: AES-256-GCM under SIGNING_KEY_ENCRYPTION_KEY with its kid as
-- associated data (license-tokens/key-sealing.ts). Rows written before hold the PEM until the
-- first start of this version seals them.
alter table signing_keys rename column private_pem to sealed_private_key;

-- What a key signs. 'token': license tokens; `licensing keys rotate` replaces it. 'offline':
-- license files and revocation lists; it stays, so a machine holding a copy of the key set goes
-- on accepting new revocation lists after the token keys rotate. Keys before this are token keys.
alter table signing_keys add column purpose text not null default 'token'
  check (purpose in ('token', 'offline'));
alter table signing_keys alter column purpose drop default;

-- Each app's revocation list version: it grows whenever the list's entries change (digest) and
-- never goes back, so a machine tells a newer list from an older one issued in the same hour.
create table revocation_list_versions (
  app_id uuid primary key references apps (id) on delete cascade,
  version bigint not null,
  digest text not null
);
