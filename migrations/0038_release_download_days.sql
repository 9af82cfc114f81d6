-- Issue 43: downloads per artifact and UTC day, so a seller sees a release's downloads over time
-- and not only each artifact's running total (release_artifacts.downloads, migration 0035). The
-- statement that adds to that total adds to this day's row in the same statement, so the two
-- never disagree about a download counted after this migration. The key, artifact first, serves
-- a release's days: its artifacts' ranges of days.
create table release_artifact_downloads (
  artifact_id uuid not null references release_artifacts (id) on delete cascade,
  day date not null,
  downloads bigint not null check (downloads > 0),
  primary key (artifact_id, day)
);
