-- Issue 43 point 2: an artifact may point at a file the seller hosts. `url` is where a
-- license-gated download link sends the client; the service neither stores nor fetches those
-- bytes, so their size and digests are what the seller declared, or null when they declared none.
-- A stored file (url null) always has all three, computed by the service while receiving it.
alter table release_artifacts add column url text;
alter table release_artifacts alter column size drop not null;
alter table release_artifacts alter column sha256 drop not null;
alter table release_artifacts alter column sha512 drop not null;
alter table release_artifacts add constraint release_artifacts_stored_whole
  check (url is not null or (size is not null and sha256 is not null and sha512 is not null));
-- The purge asks which stored blobs are still named: an external file's declared digest names none.
drop index release_artifacts_by_blob;
create index release_artifacts_by_blob on release_artifacts (sha256) where url is null;
