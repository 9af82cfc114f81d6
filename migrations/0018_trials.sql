-- Trials (docs/licenses.md, "Trials"): a product may offer a trial of trial_days days, started from
-- the hosted checkout without payment. A trial license has status 'trial' until it ends (expired)
-- or its buyer pays (active, same key and devices).
alter table products add column trial_days integer
  check (trial_days is null or trial_days between 1 and 365);

alter table licenses drop constraint licenses_status_check;
alter table licenses add constraint licenses_status_check
  check (status in ('active', 'trial', 'suspended', 'revoked', 'expired'));
-- Set when a license began as a trial (its trial's end, kept after conversion or expiry), and
-- when a payment converted it; the two together tell a running trial from a converted one.
alter table licenses add column trial_ends_at timestamptz;
alter table licenses add column converted_at timestamptz;

-- The expiry job scans trials as well as active licenses.
drop index licenses_due_idx;
create index licenses_due_idx on licenses (expires_at)
  where status in ('active', 'trial') and expires_at is not null;
-- Conversion finds the buyer's unconverted trial of the product by e-mail.
create index licenses_trial_buyer_idx on licenses (product_id, lower(email))
  where trial_ends_at is not null and converted_at is null;

-- One trial per product per e-mail and per device, held by the unique key, so two nodes starting
-- trials at the same moment cannot both win. digest is a SHA-256 of the normalized e-mail or of the
-- hwuid, so the claim keeps neither. A device bound to a trial license is claimed too, so a device
-- that had a trial cannot be moved onto another trial of the product under a new e-mail.
create table trial_claims (
  product_id uuid not null references products (id),
  kind text not null check (kind in ('email', 'device')),
  digest text not null,
  license_id uuid not null references licenses (id),
  claimed_at timestamptz not null,
  primary key (product_id, kind, digest)
);
create index trial_claims_license_idx on trial_claims (license_id);
