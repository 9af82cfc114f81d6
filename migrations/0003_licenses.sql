-- Licenses a seller issues for an app, optionally linked to the product they were sold through.
-- A product or app with licenses cannot be deleted (no cascade).
create table licenses (
  id uuid primary key,
  key text not null,
  app_id uuid not null references apps (id) on delete restrict,
  product_id uuid references products (id),
  user_id uuid not null references users (id),
  email text,
  status text not null default 'active' check (status in ('active', 'suspended', 'revoked', 'expired')),
  -- null: perpetual
  expires_at timestamptz,
  metadata jsonb not null default '{}',
  -- null: no device limit
  max_devices integer check (max_devices is null or max_devices > 0),
  device_count integer not null default 0 check (device_count >= 0),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index licenses_key_key on licenses (key);
create index licenses_app_idx on licenses (app_id, created_at, id);
create index licenses_product_idx on licenses (product_id) where product_id is not null;
-- The expiry job's scan: active licenses whose time has come.
create index licenses_due_idx on licenses (expires_at) where status = 'active' and expires_at is not null;

-- Devices (hardware ids) bound to a license. device_count on the license is the counter the
-- activation limit is enforced on; these rows say which devices hold the places.
create table license_devices (
  license_id uuid not null references licenses (id) on delete cascade,
  hwuid text not null,
  activated_at timestamptz not null default now(),
  primary key (license_id, hwuid)
);

-- RS256 keys that sign license tokens. A key is published (in the JWKS) from published_at, signs
-- from activates_at (later, so every node and client can learn it first), stops signing when a
-- newer key activates, and leaves the JWKS at unpublish_at, after every token it signed expired.
create table signing_keys (
  kid text primary key,
  private_pem text not null,
  public_jwk jsonb not null,
  published_at timestamptz not null,
  activates_at timestamptz not null,
  unpublish_at timestamptz
);

-- Revoked license tokens by jti, kept until the token would have expired anyway.
create table revoked_tokens (
  jti text primary key,
  license_id uuid not null references licenses (id) on delete cascade,
  expires_at timestamptz not null,
  revoked_at timestamptz not null default now()
);
create index revoked_tokens_expiry_idx on revoked_tokens (expires_at);
