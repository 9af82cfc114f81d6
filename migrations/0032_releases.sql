-- Issue 43: the seller's software releases, per app. A release is a version on a channel; it is a
-- draft until published, and a published one can be yanked (never offered again). Artifacts
-- (the files) come in a table of their own.
create table releases (
  id uuid primary key,
  user_id uuid not null references users (id),
  -- An app that still has releases cannot be deleted, as with its products and licenses.
  app_id uuid not null references apps (id) on delete restrict,
  -- As the seller wrote it (semantic versioning, without a leading v).
  version text not null,
  -- The version's precedence as a string that sorts in byte order (collation "C") as semantic
  -- versioning orders versions: releases/version-order.ts writes it. Build metadata has no
  -- precedence, so two versions that differ only in it are the same release.
  version_order text collate "C" not null,
  channel text not null check (channel in ('stable', 'rc', 'beta', 'alpha', 'dev')),
  status text not null default 'draft' check (status in ('draft', 'published', 'yanked')),
  notes text not null default '',
  -- Entitlements a license must grant to receive this release (all of them); empty: any license.
  required_features text[] not null default '{}',
  published_at timestamptz,
  yanked_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  unique (app_id, version_order)
);
create index releases_by_seller on releases (user_id);
