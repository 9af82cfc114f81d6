-- A license linked to a product belongs to that product's app: the pair (product, app) must
-- match, so a product with licenses cannot move to another app underneath them.
alter table products add constraint products_id_app_key unique (id, app_id);
alter table licenses
  add constraint licenses_product_app_fkey foreign key (product_id, app_id)
  references products (id, app_id) on update restrict;
