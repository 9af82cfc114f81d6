-- Admin analytics (src/modules/analytics): the time a license stopped being active, and the
-- indexes its aggregate queries read. Each query is a range scan or an index-only count; the
-- reasons are in docs/analytics.md.

-- When a license left active by suspension or revocation; null while active or expired. A
-- trigger keeps it on every status write, so every path that moves a status (seller, refund,
-- dispute, expiry job) records it; the time is updated_at, which those writes take from the
-- service clock. Moving on between suspended and revoked keeps the first time.
alter table licenses add column deactivated_at timestamptz;

-- Existing rows: the last suspension or revocation event of the license, else its last update.
update licenses l
set deactivated_at = coalesce(m.at, x.updated_at)
from licenses x
left join (
  select data ->> 'id' as id, max(created_at) as at
  from events
  where type = 'license.revoked'
  group by 1
) m on m.id = x.id::text
where l.id = x.id and x.status in ('suspended', 'revoked');

create function licenses_track_deactivation() returns trigger language plpgsql as $$
begin
  if new.status not in ('suspended', 'revoked') then
    new.deactivated_at := null;
  elsif tg_op = 'INSERT' then
    new.deactivated_at := coalesce(new.deactivated_at, new.updated_at);
  elsif old.status not in ('suspended', 'revoked') then
    new.deactivated_at := new.updated_at;
  end if;
  return new;
end $$;

create trigger licenses_track_deactivation before insert or update of status on licenses
  for each row execute function licenses_track_deactivation();

-- When the license stopped counting as active: its expiry or its deactivation, whichever came
-- first, never before it was created. Null for a perpetual license that is still active; a
-- future time for one that will expire.
alter table licenses add column ended_at timestamptz generated always as (
  case
    when coalesce(expires_at, deactivated_at) is not null
      then greatest(created_at, least(expires_at, deactivated_at))
  end
) stored;

-- Licenses issued per bucket, and how many existed before a range.
create index licenses_created_idx on licenses (created_at);
-- Licenses that stopped being active per bucket; expires_at tells an expiry from a suspension
-- or revocation without reading the row.
create index licenses_ended_idx on licenses (ended_at) include (expires_at) where ended_at is not null;
-- Counts by status, where an active license past its expiry counts as expired.
create index licenses_status_idx on licenses (status, expires_at);
-- Suspensions and revocations per bucket (data.status tells which).
create index events_license_revoked_idx on events (created_at) where type = 'license.revoked';
-- Revenue per bucket and currency: paid orders by payment time, read from the index alone.
create index orders_paid_idx on orders (paid_at) include (currency, amount) where status = 'paid';
-- Orders by status; paid_at tells the refunded ones (paid once, canceled since) from the rest.
create index orders_status_idx on orders (status) include (paid_at);
-- Accounts closed per bucket (account registrations use users_created_idx).
create index users_deleted_idx on users (deleted_at) where deleted_at is not null;
