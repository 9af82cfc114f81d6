-- Outbound webhooks. An endpoint belongs to a seller and, optionally, to one of their apps (it then
-- receives only that app's events). Endpoints of admins also receive platform events
-- (user.registered).
create table webhook_endpoints (
  id uuid primary key,
  user_id uuid not null references users (id),
  app_id uuid references apps (id) on delete cascade,
  url text not null,
  events text[] not null,
  -- Kept as written: it signs every delivery.
  secret text not null,
  enabled boolean not null default true,
  disabled_reason text,
  consecutive_failures integer not null default 0,
  failing_since timestamptz,
  last_success_at timestamptz,
  last_failure_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhook_endpoints_user_idx on webhook_endpoints (user_id, created_at, id);

-- One delivery of one event to one endpoint, retried until it succeeds or gives up. A worker
-- claims it by setting leased_until; a lease that runs out (crashed worker) frees it again.
create table webhook_deliveries (
  id uuid primary key,
  endpoint_id uuid not null references webhook_endpoints (id) on delete cascade,
  event_id uuid references events (id),
  event_type text not null,
  -- The envelope's data and timestamp, fixed at fan-out so every attempt sends the same event.
  payload jsonb not null,
  event_time timestamptz not null,
  trigger text not null check (trigger in ('auto', 'manual', 'test')),
  status text not null default 'pending' check (status in ('pending', 'succeeded', 'failed', 'canceled')),
  attempts integer not null default 0,
  next_attempt_at timestamptz,
  leased_until timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where status = 'pending';
create index webhook_deliveries_endpoint_idx on webhook_deliveries (endpoint_id, created_at);

-- Every attempt, kept for WEBHOOK_LOG_DAYS.
create table webhook_attempts (
  id uuid primary key,
  delivery_id uuid not null references webhook_deliveries (id) on delete cascade,
  endpoint_id uuid not null references webhook_endpoints (id) on delete cascade,
  attempt integer not null,
  trigger text not null,
  status_code integer not null,
  response_body text not null default '',
  success boolean not null,
  duration_ms integer not null,
  error text,
  created_at timestamptz not null default now()
);
create index webhook_attempts_endpoint_idx on webhook_attempts (endpoint_id, created_at desc, id);
create index webhook_attempts_created_idx on webhook_attempts (created_at);

-- Events are turned into deliveries once; the dispatcher finds the rest by this flag (not by
-- sequence number, which is taken before commit and so can become visible out of order).
alter table events add column dispatched_at timestamptz;
create index events_undispatched_idx on events (seq) where dispatched_at is null;
