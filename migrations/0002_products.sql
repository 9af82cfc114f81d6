-- Sellable packages. A product belongs to one of the seller's apps: licenses bought through it
-- are issued for that app. Prices are exact decimals in the product's currency.
create table products (
  id uuid primary key,
  user_id uuid not null references users (id),
  -- An app that still has products cannot be deleted (the seller deletes or moves them first).
  app_id uuid not null references apps (id) on delete restrict,
  name text not null,
  description text not null default '',
  price numeric(14, 4) not null check (price > 0),
  currency char(3) not null,
  active boolean not null default true,
  success_url text,
  cancel_url text,
  help_url text,
  support_url text,
  terms_url text,
  privacy_url text,
  refund_url text,
  product_type text not null default 'license' check (product_type in ('license', 'api_access', 'subscription')),
  billing_type text not null default 'one_time' check (billing_type in ('one_time', 'recurring')),
  interval text check (interval in ('month', 'year')),
  partner_price_id_recurring text,
  partner_tax_enabled boolean not null default false,
  partner_identity_required boolean not null default false,
  crypto_payments_enabled boolean not null default false,
  hide_email boolean not null default false,
  auto_redirect boolean not null default false,
  license_emails text[] not null default '{}',
  send_license_to_customer boolean not null default false,
  callback_secret text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check ((billing_type = 'recurring') = (interval is not null)),
  check (product_type <> 'subscription' or billing_type = 'recurring')
);
create index products_user_idx on products (user_id, created_at, id);
create index products_app_idx on products (app_id);
