-- What buyers may do to a license's devices in the portal (docs/buyer-portal.md). The settings
-- are the product's until license policies take them over; licenses without a product get the
-- same defaults in code (products/schemas.ts, PORTAL_POLICY_DEFAULTS).
alter table products
  add column portal_license_file_days integer not null default 30
    check (portal_license_file_days between 1 and 3650),
  add column portal_device_releases integer not null default 3
    check (portal_device_releases between 0 and 1000),
  add column portal_release_period_days integer not null default 30
    check (portal_release_period_days between 1 and 365);

-- Until when the offline license files signed for a device are valid (the latest expiry); null
-- while none was. A buyer cannot release the device before then; the seller can. Files signed
-- before this migration were not recorded and hold nothing.
alter table license_devices add column offline_until timestamptz;

-- Device releases buyers made in the portal: what the per-period allowance counts. Rows older
-- than the longest period are deleted by the next release of the same license.
create table buyer_device_releases (
  license_id uuid not null references licenses (id) on delete cascade,
  released_at timestamptz not null
);
create index buyer_device_releases_license_idx on buyer_device_releases (license_id, released_at);
