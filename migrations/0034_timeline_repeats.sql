-- Issue 42: a client that calls again and again with the same answer (a loop, a heartbeat) makes
-- one timeline entry per flush rather than one per call: `repeats` counts the calls it stands
-- for, from `occurred_at` (the first) to `last_occurred_at` (the last; null for a single call).
alter table license_events add column repeats integer not null default 1 check (repeats >= 1);
alter table license_events add column last_occurred_at timestamptz;
