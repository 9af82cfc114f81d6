-- Issue 42, the seller's brand: what checkout pages, the buyer portal and buyers' e-mails show of
-- the seller (a name, a logo, an accent colour), and the sites allowed to frame the checkout in
-- its overlay. One row per account, made by the first change; an account without one shows no brand.
create table seller_brands (
  user_id uuid primary key references users (id),
  -- What the logo's public address names, so that address does not give away the account's id.
  public_id uuid not null unique,
  display_name text,
  accent_color text check (accent_color ~ '^#[0-9a-f]{6}$'),
  -- Exact origins (scheme, host, port) allowed as frame-ancestors of the seller's checkout pages.
  overlay_origins text[] not null default '{}',
  -- The logo as re-encoded on upload (never the bytes sent), with its type, digest and size.
  logo bytea,
  logo_type text check (logo_type in ('image/png', 'image/jpeg')),
  logo_sha256 text,
  logo_width integer,
  logo_height integer,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  check ((logo is null) = (logo_type is null) and (logo is null) = (logo_sha256 is null))
);
