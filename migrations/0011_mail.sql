-- Delivery of notifications by e-mail. A worker claims a notification by setting leased_until
-- (a lease that runs out frees it for another node); a failed send waits until next_attempt_at
-- and gives up as 'failed' after a few attempts. A null next_attempt_at means due now.
alter table notifications
  add column attempts integer not null default 0,
  add column next_attempt_at timestamptz,
  add column leased_until timestamptz,
  add column last_error text;
