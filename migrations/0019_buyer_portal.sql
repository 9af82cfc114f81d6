-- The buyer portal (docs/buyer-portal.md): buyers sign in on the checkout host with a one-time link
-- sent by e-mail and see what they bought under that address. Neither table keeps a token: only
-- the SHA-256 of it, so a copy of the database opens no portal.

-- One-time sign-in links. Used once (used_at set by one conditional update), within 15 minutes.
create table portal_sign_in_links (
  token_hash text primary key,
  -- Normalized (trimmed, lowercase).
  email text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  used_at timestamptz
);
create index portal_sign_in_links_email_idx on portal_sign_in_links (email, created_at);

-- Signed-in browsers: the cookie carries the token, this row its hash and the address it opens.
create table portal_sessions (
  token_hash text primary key,
  email text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null
);
create index portal_sessions_expiry_idx on portal_sessions (expires_at);

-- The portal reads a buyer's licenses, orders and subscriptions by e-mail, whatever its case.
create index licenses_buyer_email_idx on licenses (lower(email)) where email is not null;
create index orders_buyer_email_idx on orders (lower(email));
create index subscriptions_buyer_email_idx on subscriptions (lower(email));
