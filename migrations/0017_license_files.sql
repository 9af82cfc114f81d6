-- Keys that signed offline license files, and until when those files are valid. License files
-- live far longer than tokens (up to ten years), so such a key stays in the published key set
-- until the last file it signed has expired, even after a rotation replaced it.
create table license_file_keys (
  kid text primary key references signing_keys (kid) on delete cascade,
  files_valid_until timestamptz not null
);
