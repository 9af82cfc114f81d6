-- Issue 42, lists that work. When client software last verified each license (any answer, as
-- long as the key was found): written by the verification counts' batched flush, never by a
-- request. Null until the first verification after this migration.
alter table licenses add column last_verified_at timestamptz;

-- The seller's licenses across all their apps, newest first (read backwards; the per-app list
-- already has licenses_app_idx (app_id, created_at, id)). Orders have orders_user_idx.
create index licenses_user_created_idx on licenses (user_id, created_at, id);
