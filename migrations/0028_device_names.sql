-- Issue 39: what the client software says a device is ("Ana's MacBook", "macOS 15"), sent with
-- verify, validate-hardware or checkout next to the hwuid and shown to the seller and the buyer.
-- Null until a client sends one; a later call sending another value replaces it.
alter table license_devices
  add column name text check (char_length(name) between 1 and 100),
  add column platform text check (char_length(platform) between 1 and 50);
alter table license_seats
  add column name text check (char_length(name) between 1 and 100),
  add column platform text check (char_length(platform) between 1 and 50);
