-- Entitlements: named features a product grants; a license may override them (null: the
-- product's). Verification, tokens and license files read them (docs/licenses.md).
alter table products add column features text[] not null default '{}';
alter table licenses add column features text[];

-- Floating (concurrent) licenses: up to max_seats devices at once, each holding a seat for a
-- lease it renews with heartbeats. Floating and a device limit are exclusive.
alter table licenses add column floating boolean not null default false;
alter table licenses add column max_seats integer check (max_seats is null or max_seats > 0);
alter table licenses add column lease_seconds integer
  check (lease_seconds is null or lease_seconds between 60 and 86400);
alter table licenses add constraint licenses_floating_shape check (
  (floating and max_seats is not null and lease_seconds is not null and max_devices is null)
  or (not floating and max_seats is null and lease_seconds is null)
);

-- The seats taken on floating licenses. A seat counts only while lease_expires_at is in the
-- future, so a lapsed lease frees its place without any job; checkout takes seats under the
-- license row lock and clears that license's lapsed rows as it goes.
create table license_seats (
  license_id uuid not null references licenses (id) on delete cascade,
  hwuid text not null,
  acquired_at timestamptz not null,
  lease_expires_at timestamptz not null,
  primary key (license_id, hwuid)
);
