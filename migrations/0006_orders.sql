-- A purchase: one order per payment attempt, carrying its transaction. The Transaction resource of
-- the interface is this row seen from the payment side (transaction_id, status, status_reason).
create table orders (
  id uuid primary key,
  transaction_id text not null unique,
  user_id uuid not null references users (id),
  product_id uuid not null references products (id),
  app_id uuid not null,
  license_id uuid references licenses (id),
  email text not null,
  amount numeric(14, 4) not null,
  currency char(3) not null,
  status text not null default 'pending' check (status in ('pending', 'paid', 'canceled', 'rejected')),
  status_reason text not null default '',
  payment_provider text not null,
  partner_payment_id text not null,
  -- The buyer's proof of the payment (the partner's client secret), compared in constant time.
  client_secret text not null,
  paid_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index orders_partner_payment_key on orders (payment_provider, partner_payment_id);
create index orders_user_idx on orders (user_id, created_at, id);

-- The built-in sandbox partner keeps its payments here, so they survive restarts and every node
-- sees them (it stands in for the partner's own records).
create table sandbox_payments (
  id text primary key,
  idempotency_key text not null unique,
  amount_minor bigint not null,
  currency char(3) not null,
  status text not null check (status in ('requires_payment_method', 'succeeded', 'canceled')),
  failure_message text,
  client_secret text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
