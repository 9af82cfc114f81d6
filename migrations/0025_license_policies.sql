-- Issue 39: a license policy on every product (docs/products.md, "License policy"), which the
-- licenses it sells, trials and issues follow. Products made before it sell what they always
-- sold: licenses without a device limit.
alter table products
  add column license_policy jsonb not null default '{"model": "unlimited"}'::jsonb;

-- An order keeps the policy it was opened with, as it keeps its billing (migration 0020): a
-- product edited while a payment is still open changes later orders only. Null on renewal
-- orders and on orders opened before this migration (those fulfil as unlimited, as then).
alter table orders add column license_policy jsonb;
