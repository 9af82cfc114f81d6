-- The checkout host: subscriptions from recurring checkouts, their renewal orders, strict-mode
-- tokens, and merchant webhooks (checkout host -> seller backend) on the same delivery engine as
-- core webhooks.

create table subscriptions (
  id uuid primary key,
  user_id uuid not null references users (id),
  app_id uuid not null,
  product_id uuid not null references products (id),
  license_id uuid references licenses (id),
  email text not null,
  status text not null default 'active' check (status in ('active', 'canceled')),
  payment_provider text not null,
  -- The partner's customer holding the saved card, and that card; renewals charge it off-session.
  partner_subscription_id text not null,
  partner_payment_method text not null,
  interval text not null check (interval in ('month', 'year')),
  currency char(3) not null,
  current_period_end timestamptz not null,
  canceled_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index subscriptions_user_idx on subscriptions (user_id, created_at, id);
create index subscriptions_product_idx on subscriptions (product_id);

-- A checkout form's attempt id: a double submit opens one order, not two.
alter table orders add column checkout_key text;
create unique index orders_checkout_key on orders (checkout_key) where checkout_key is not null;
-- Strict mirror mode: the seller's TOKEN, handed back in the signed redirect.
alter table orders add column mirror_token text;
-- Recurring purchases and renewals belong to a subscription. A renewal pays for the period that
-- ends at renewal_period_end; one live (pending or paid) charge per period.
alter table orders add column subscription_id uuid references subscriptions (id);
alter table orders add column renewal_period_end timestamptz;
create unique index orders_renewal_key on orders (subscription_id, renewal_period_end)
  where renewal_period_end is not null and status in ('pending', 'paid');

-- Merchant webhook endpoints: one per product, signed with the product's callback secret at send
-- time (the secret column stays empty for them).
alter table products add column merchant_webhook_url text;
alter table webhook_endpoints add column kind text not null default 'core' check (kind in ('core', 'merchant'));
alter table webhook_endpoints add column product_id uuid references products (id) on delete cascade;
create unique index webhook_endpoints_merchant_key on webhook_endpoints (product_id) where kind = 'merchant';

-- The sandbox partner keeps the card of a payment made for renewals, as a card partner would.
alter table sandbox_payments add column card text;
alter table sandbox_payments add column customer_id text;
alter table sandbox_payments add column saved_released_at timestamptz;
