-- Seller overview (GET /v1/overview, src/modules/analytics/seller-overview.ts): each figure reads
-- the seller's own slice of an index, so its cost follows the seller's data, not the platform's.
-- The reasons are in docs/analytics.md.

-- Revenue per bucket and currency of one seller (and app): paid orders by payment time, read from
-- the index alone.
create index orders_user_paid_idx on orders (user_id, paid_at) include (app_id, currency, amount)
  where status = 'paid';
-- One seller's licenses by status (an active one past its expiry counts as expired), and their ids
-- for the devices activated on them.
create index licenses_user_status_idx on licenses (user_id, status, expires_at) include (app_id, id);
-- Verifications of one seller's apps over a range of days (the primary key is day first).
create index license_verification_counts_app_idx on license_verification_counts (app_id, day)
  include (valid, invalid);
