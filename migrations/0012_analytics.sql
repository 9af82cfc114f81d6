-- Admin analytics (src/modules/analytics): the time a license stopped being active, and the
-- indexes its aggregate queries read. Each query is a range scan or an index-only count; the
-- reasons are in docs/analytics.md.

-- When a license left active by suspension or revocation (null while active or expired), and
-- when it stopped counting as active: its expiry or that deactivation, whichever came first,
-- never before it was created (null for a perpetual license still active; a future time for one
-- that will expire). Plain columns kept by a trigger on every write of status or expiry, so
-- every path that moves them (seller, refund, dispute, expiry job, renewal) records them; the
-- time is updated_at, which those writes take from the service clock. Moving on between
-- suspended and revoked keeps the first time. Plain rather than generated, so adding them does
-- not rewrite the table under an exclusive lock.
alter table licenses add column deactivated_at timestamptz;
alter table licenses add column ended_at timestamptz;

create function licenses_track_end() returns trigger language plpgsql as $$
begin
  if new.status not in ('suspended', 'revoked') then
    new.deactivated_at := null;
  elsif tg_op = 'INSERT' then
    new.deactivated_at := coalesce(new.deactivated_at, new.updated_at);
  elsif old.status not in ('suspended', 'revoked') then
    new.deactivated_at := new.updated_at;
  end if;
  -- least and greatest skip nulls.
  new.ended_at := case
    when coalesce(new.expires_at, new.deactivated_at) is not null
      then greatest(new.created_at, least(new.expires_at, new.deactivated_at))
  end;
  return new;
end $$;

-- Existing rows: the deactivation time is the license's last suspension or revocation event,
-- else its last update; the update runs the trigger, which fills ended_at from it. Only rows
-- with something to record are touched (row locks; reads go on).
update licenses l
set deactivated_at = coalesce(m.at, l.updated_at)
from licenses x
left join (
  select data ->> 'id' as id, max(created_at) as at
  from events
  where type = 'license.revoked'
  group by 1
) m on m.id = x.id::text
where l.id = x.id and x.status in ('suspended', 'revoked');

create trigger licenses_track_end before insert or update of status, expires_at
  on licenses for each row execute function licenses_track_end();

-- Naming status runs the trigger, which keeps the deactivation time above and derives ended_at.
update licenses set status = status where deactivated_at is not null or expires_at is not null;

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
