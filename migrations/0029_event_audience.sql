-- Issue 41: commerce events (subscription.created, dispute.updated…) go to sellers' own endpoints
-- under the same names the products' merchant webhooks already use, with a payload of their own.
-- The name alone no longer says who an event is for, so each event says it: 'core' (the seller's
-- and admins' endpoints) or 'merchant' (the merchant webhook of the product in data.productId).
alter table events add column audience text not null default 'core' check (audience in ('core', 'merchant'));
update events set audience = 'merchant'
where type in ('payment.succeeded', 'payment.failed', 'payment.refunded', 'subscription.created',
  'subscription.renewed', 'subscription.canceled', 'dispute.created', 'dispute.updated');
