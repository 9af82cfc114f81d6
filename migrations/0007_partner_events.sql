-- Card partner webhook events already handled, by the partner's event id: a replay is
-- acknowledged and changes nothing.
create table partner_events (
  id text primary key,
  provider text not null,
  type text not null,
  received_at timestamptz not null default now()
);
