import { sql } from 'kysely';
import { startTestServer } from '../src/testing/harness.js';
import { AS_IN_PRODUCTION, measure, report } from './lib.js';

/**
 * The admin analytics routes over a large platform: about a million licenses (BENCH_LICENSES),
 * with a seller per 50 licenses, 0.3 orders per license, subscriptions and disputes, spread over
 * three years and written straight into a database of the bench's own with generate_series.
 * Each route is measured beside GET /v1/health/ready (one trivial query) in the same run, with
 * one connection: the latency of one admin's dashboard, not a load test.
 */
export async function analyticsRoutes(): Promise<string> {
  const licenses = Number(process.env.BENCH_LICENSES ?? 1_000_000);
  const server = await startTestServer({ ...AS_IN_PRODUCTION }, { ownDatabase: true });
  try {
    const started = process.hrtime.bigint();
    await seed(server.db, licenses);
    const seedSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    const token = await server.adminToken();
    const one = { connections: 1 };
    const get = async (name: string, path: string) => {
      const request = { url: `${server.api.baseUrl}${path}`, headers: { authorization: `Bearer ${token}` } };
      // One request first, so the figures are of warm index pages, as on a live server.
      (await server.api.get(path, { token })).expect(200);
      return measure(name, request, one);
    };
    const rows = [
      await measure(
        'GET /v1/health/ready (baseline: one query)',
        { url: `${server.api.baseUrl}/health/ready` },
        one,
      ),
      await get('GET /v1/auth/me (admin token)', '/auth/me'),
      await get('GET /v1/analytics/stats', '/analytics/stats'),
      await get('GET /v1/analytics/revenue (30 days)', '/analytics/revenue'),
      await get('GET /v1/analytics/revenue?interval=month (12 months)', '/analytics/revenue?interval=month'),
      await get('GET /v1/analytics/licenses (30 days)', '/analytics/licenses'),
      await get(
        'GET /v1/analytics/licenses?interval=month (12 months)',
        '/analytics/licenses?interval=month',
      ),
      await get('GET /v1/analytics/users (30 days)', '/analytics/users'),
      await get('GET /v1/analytics/users?interval=week (12 weeks)', '/analytics/users?interval=week'),
    ];
    const storage = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';
    const counts = `${licenses.toLocaleString('en')} licenses, ${(licenses / 50).toLocaleString('en')} sellers, ${((licenses * 3) / 10).toLocaleString('en')} orders`;
    return `${report(`Admin analytics, ${counts} (${storage})`, rows)}\n\nSeeding (generate_series, then VACUUM ANALYZE) took ${seedSeconds.toFixed(0)} s.`;
  } finally {
    await server.stop();
  }
}

/**
 * Writes the platform with set-based SQL. Statuses and expiries follow what the service would
 * have done: 3% revoked, 2% suspended (each with its license.revoked event), half the licenses
 * expiring after a year (expired once that passed), 90% of orders paid, 2.5% of them refunded.
 */
async function seed(db: Awaited<ReturnType<typeof startTestServer>>['db'], licenses: number) {
  const sellers = Math.max(1, Math.round(licenses / 50));
  const orders = Math.round((licenses * 3) / 10);
  await sql
    .raw(`
    select setseed(0.42);
    insert into users (id, email, password_hash, role, tier, created_at, updated_at, deleted_at)
    select gen_random_uuid(), 'bench-' || i || '@bench.example', 'x', 'SELLER',
      (array['free', 'free', 'free', 'pro', 'pro', 'business', 'enterprise'])[1 + i % 7],
      c, c, case when i % 50 = 0 then c + (now() - c) * random() end
    from (select i, now() - random() * interval '1095 days' as c from generate_series(1, ${sellers}) i) s;

    create temporary table bench_sellers as
    select row_number() over (order by id) as n, id as user_id, gen_random_uuid() as app_id,
      gen_random_uuid() as product_id, created_at,
      (array['USD', 'EUR', 'JPY'])[1 + (row_number() over (order by id)) % 3]::char(3) as currency
    from users where email like 'bench-%';
    insert into apps (id, user_id, name, created_at, updated_at)
    select app_id, user_id, 'Bench app', created_at, created_at from bench_sellers;
    insert into products (id, user_id, app_id, name, price, currency, callback_secret, active, created_at, updated_at)
    select product_id, user_id, app_id, 'Bench product', case when currency = 'JPY' then 1500 else 19.99 end,
      currency, 'x', n % 10 <> 0, created_at, created_at
    from bench_sellers;

    insert into licenses (id, key, app_id, product_id, user_id, status, expires_at, deactivated_at, created_at, updated_at)
    select gen_random_uuid(), 'BENCH-' || s.i, b.app_id, b.product_id, b.user_id,
      case when r < 0.03 then 'revoked' when r < 0.05 then 'suspended' when e < now() then 'expired' else 'active' end,
      e, case when r < 0.05 then least(now(), c + interval '60 days' * random()) end, c, c
    from (select i, random() as r, random() as p, now() - random() * interval '1095 days' as c
          from generate_series(1, ${licenses}) i) s
    cross join lateral (select case when s.p < 0.5 then s.c + interval '365 days' end as e) x
    join bench_sellers b on b.n = 1 + s.i % ${sellers};
    insert into events (id, type, user_id, app_id, data, created_at, dispatched_at)
    select gen_random_uuid(), 'license.created', user_id, app_id, jsonb_build_object('id', id, 'status', 'active'),
      created_at, created_at
    from licenses;
    insert into events (id, type, user_id, app_id, data, created_at, dispatched_at)
    select gen_random_uuid(), 'license.revoked', user_id, app_id, jsonb_build_object('id', id, 'status', status),
      deactivated_at, deactivated_at
    from licenses where deactivated_at is not null;

    insert into orders (id, transaction_id, user_id, product_id, app_id, email, amount, currency, status,
      payment_provider, partner_payment_id, client_secret, paid_at, created_at, updated_at)
    select gen_random_uuid(), 'txn_bench_' || s.i, b.user_id, b.product_id, b.app_id, 'buyer@bench.example',
      case when b.currency = 'JPY' then 1500 else 19.99 end, b.currency,
      case when r < 0.9 then 'paid' when r < 0.95 then 'canceled' when r < 0.98 then 'rejected' else 'pending' end,
      'sandbox', 'pi_bench_' || s.i, 'x', case when r < 0.925 then c end, c, c
    from (select i, random() as r, now() - random() * interval '1095 days' as c
          from generate_series(1, ${orders}) i) s
    join bench_sellers b on b.n = 1 + s.i % ${sellers};
    insert into subscriptions (id, user_id, app_id, product_id, email, status, payment_provider,
      partner_subscription_id, partner_payment_method, interval, currency, current_period_end, created_at, updated_at)
    select gen_random_uuid(), user_id, app_id, product_id, 'sub@bench.example',
      case when n % 4 = 0 then 'canceled' else 'active' end, 'sandbox', 'cus_' || n, 'pm_' || n, 'month',
      currency, now() + interval '20 days', created_at, created_at
    from bench_sellers where n % 2 = 0;
    insert into disputes (id, partner_dispute_id, order_id, user_id, app_id, status, amount, currency, created_at, updated_at)
    select gen_random_uuid(), 'dp_' || o.id, o.id, o.user_id, o.app_id,
      (array['needs_response', 'under_review', 'won', 'lost'])[1 + (row_number() over ()) % 4], o.amount, o.currency,
      o.created_at, o.created_at
    from orders o where o.status = 'paid' and o.transaction_id like 'txn_bench_%' limit ${Math.max(1, Math.round(orders / 300))};
  `)
    .execute(db);
  // VACUUM cannot run inside the implicit transaction of a multi-statement string.
  await sql.raw('vacuum analyze').execute(db);
}
