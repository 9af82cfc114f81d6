-- License verifications per UTC day and app, valid and invalid apart. Each node tallies them in
-- memory and adds its tallies here every VERIFICATION_FLUSH_MS, so the verify path never writes.
-- The primary key, day first, also serves the analytics' range scans over days.
create table license_verification_counts (
  day date not null,
  app_id uuid not null references apps (id) on delete cascade,
  valid bigint not null default 0 check (valid >= 0),
  invalid bigint not null default 0 check (invalid >= 0),
  primary key (day, app_id)
);
