-- Issue 43: downloads through license-gated links. Each artifact counts the downloads it served
-- (a request for the whole file, or for a range that starts at its first byte, counts once), so a
-- seller sees how many copies of each release went out.
alter table release_artifacts add column downloads bigint not null default 0;
-- The update check's search: an app's published releases, newest version first.
create index releases_published on releases (app_id, version_order desc) where status = 'published';
