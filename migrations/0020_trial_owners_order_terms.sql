-- Issue 38: trials belong to whoever proves the address or the device, and orders keep their
-- terms (docs/security.md, "Trials" and "Orders and their terms").

-- An order keeps the billing it was opened with, so a product changed while its payment is still
-- open (a 3-D Secure challenge, a crypto payment confirming) changes later orders only. Its price
-- is the order's amount and currency already. Renewal orders carry none: their subscription's.
alter table orders add column billing_type text check (billing_type in ('one_time', 'recurring'));
alter table orders add column billing_interval text check (billing_interval in ('month', 'year'));
update orders o
  set billing_type = p.billing_type, billing_interval = p.interval
  from products p
  where p.id = o.product_id and o.renewal_period_end is null;
alter table orders add constraint orders_terms check (
  renewal_period_end is not null
  or (billing_type is not null and (billing_type = 'recurring') = (billing_interval is not null))
);

-- A trial never becomes the paid license: a payment issues a new license and ends the buyer's
-- trials (expired), moving their devices to it. replaced_by names that license; a trial it is set
-- on goes back to being a trial, never a paid license, if the seller extends it.
alter table licenses add column replaced_by uuid references licenses (id);

-- The one-trial rule and payment find a buyer's licenses by the address as licenses/buyer-address.ts
-- normalises it (lower case, no +tag in the local part); this expression must stay the same as
-- the one there.
drop index licenses_trial_buyer_idx;
create index licenses_product_buyer_idx
  on licenses (product_id, regexp_replace(lower(email), '^([^@+]+)[+][^@]*@', '\1@'));
