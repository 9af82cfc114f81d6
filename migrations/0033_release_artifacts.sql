-- Issue 43: the files of a release. The bytes live in the artifact store, named by their SHA-256
-- (content-addressed: the same file uploaded twice is stored once); a row appears only once every
-- byte is stored and hashed, so an interrupted upload leaves nothing visible.
create table release_artifacts (
  id uuid primary key,
  release_id uuid not null references releases (id) on delete cascade,
  user_id uuid not null references users (id),
  app_id uuid not null references apps (id),
  filename text not null,
  -- '' where the seller named none: the artifact suits every platform or architecture.
  platform text not null default '',
  arch text not null default '',
  filetype text not null,
  size bigint not null,
  sha256 text not null,
  sha512 text not null,
  created_at timestamptz not null,
  unique (release_id, filename, platform, arch)
);
create index release_artifacts_by_blob on release_artifacts (sha256);
