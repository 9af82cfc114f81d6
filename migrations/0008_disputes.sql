-- Chargebacks, as the card partner reports them. A dispute holds the license of its order:
-- suspended while open, reinstated if won, revoked if lost.
create table disputes (
  id uuid primary key,
  partner_dispute_id text not null unique,
  order_id uuid not null references orders (id),
  user_id uuid not null references users (id),
  app_id uuid not null,
  status text not null,
  amount numeric(14, 4) not null,
  currency char(3) not null,
  reason text not null default '',
  evidence_due_by timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index disputes_user_idx on disputes (user_id, created_at, id);
