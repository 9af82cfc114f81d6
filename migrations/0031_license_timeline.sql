-- Issue 42: what happened to each license, newest first, for the seller answering a support
-- e-mail. Verifications (and what the client's calls do: activations, check-ins, consumes) are
-- buffered in each node's memory and added here in one multi-row insert per batch; status
-- changes, releases, seats, e-mails and webhook events are written in the transaction of their
-- change. Rows older than LICENSE_EVENTS_RETENTION_DAYS are purged hourly.
create table license_events (
  id uuid primary key,
  license_id uuid not null references licenses (id) on delete cascade,
  user_id uuid not null,
  app_id uuid not null,
  type text not null,
  -- A verification's answer ('valid' or its refusal code), 'failed' for a delivery that failed.
  outcome text,
  hwuid text,
  -- As the app's clientAddresses setting kept it when the entry was written (full, truncated).
  client_address text,
  app_version text,
  -- Who made a change: the seller's session, an API key, the buyer in the portal, billing
  -- (payments, renewals, disputes) or the system (the expiry job); null for the client's calls.
  actor_kind text check (actor_kind in ('seller', 'api_key', 'buyer', 'billing', 'system')),
  actor_id text,
  data jsonb not null default '{}',
  occurred_at timestamptz not null
);
-- The timeline route's keyset: a license's entries newest first, the id breaking ties.
create index license_events_timeline on license_events (license_id, occurred_at desc, id desc);
-- The retention purge's range scan.
create index license_events_occurred on license_events (occurred_at);

-- What a license's timeline keeps of a client's address: all of it, its network (IPv4 /24,
-- IPv6 /48) or nothing.
alter table apps add column client_addresses text not null default 'truncated'
  check (client_addresses in ('full', 'truncated', 'none'));
