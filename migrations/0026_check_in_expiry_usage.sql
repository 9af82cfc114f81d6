-- Issue 39: check-in, expiry strategy and usage quotas (docs/licenses.md). A license keeps its own
-- copy of them, taken from its product's policy when it is issued, as it keeps its limits.

-- Check-in: the license must verify online every check_in_days (plus grace_days) days; null
-- check_in_days asks for none. checked_in_at is the last online check-in (null: since created_at).
alter table licenses add column check_in_days integer check (check_in_days between 1 and 3650);
alter table licenses add column grace_days integer check (grace_days between 0 and 365);
alter table licenses add column checked_in_at timestamptz;

-- restrict: an expired license stops; maintain_access: it keeps verifying, answered as expired.
alter table licenses add column expiry_strategy text not null default 'restrict'
  check (expiry_strategy in ('restrict', 'maintain_access'));

-- Usage quota: max_uses per period (null: no quota); uses counts the period that began at
-- uses_period_start (a UTC day or month, or the epoch for never and renewal).
alter table licenses add column max_uses integer check (max_uses between 1 and 1000000000);
alter table licenses add column uses bigint not null default 0 check (uses >= 0);
alter table licenses add column uses_reset_interval text
  check (uses_reset_interval in ('never', 'day', 'month', 'renewal'));
alter table licenses add column uses_period_start timestamptz;
