-- Sellers and admins. E-mails are unique case-insensitively among accounts that are not
-- deleted; deleted accounts are kept (soft delete) so that their records stay attributable.
create table users (
  id uuid primary key,
  email text not null,
  name text,
  password_hash text not null,
  role text not null default 'SELLER' check (role in ('SELLER', 'ADMIN')),
  tier text not null default 'free' check (tier in ('free', 'pro', 'business', 'enterprise')),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  deleted_at timestamptz
);
create unique index users_email_key on users (lower(email)) where deleted_at is null;
create index users_created_idx on users (created_at, id);

-- A seller's software: holds licenses, API keys and webhook configuration.
create table apps (
  id uuid primary key,
  user_id uuid not null references users (id),
  name text not null,
  description text not null default '',
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index apps_user_idx on apps (user_id, created_at, id);

-- App API keys. Only a SHA-256 digest of the key is stored; the unique index on it is the
-- O(1) lookup used to authenticate a request.
create table api_keys (
  id uuid primary key,
  user_id uuid not null references users (id),
  app_id uuid not null references apps (id) on delete cascade,
  name text not null,
  prefix text not null,
  key_hash text not null,
  created_at timestamptz not null default now(),
  last_used_at timestamptz,
  revoked_at timestamptz
);
create unique index api_keys_hash_key on api_keys (key_hash);
create index api_keys_app_idx on api_keys (app_id, created_at, id);

-- The event outbox: a state change records the events it causes in its own transaction.
-- seq gives a total order for the delivery worker to follow.
create table events (
  id uuid primary key,
  seq bigint generated always as identity unique,
  type text not null,
  user_id uuid references users (id),
  app_id uuid,
  data jsonb not null,
  created_at timestamptz not null default now()
);
create index events_user_idx on events (user_id, seq);
