-- Messages waiting to be sent (e-mail to buyers and sellers), written in the same transaction as
-- what they announce. Delivery (SMTP or a local outbox) takes them from here.
create table notifications (
  id uuid primary key,
  kind text not null,
  -- A buyer is addressed by e-mail; a seller by account (the address is read when sending).
  to_email text,
  to_user_id uuid references users (id),
  data jsonb not null,
  status text not null default 'pending' check (status in ('pending', 'sent', 'failed')),
  created_at timestamptz not null default now(),
  sent_at timestamptz,
  check (to_email is not null or to_user_id is not null)
);
create index notifications_pending_idx on notifications (created_at) where status = 'pending';
