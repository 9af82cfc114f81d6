import { sql } from 'kysely';
import type { Executor } from '../../platform/db/database.js';
import { preparedStatement } from '../../platform/db/prepared.js';

/*
 * What verification reads: a license by its key with the device asked about, many at once, and
 * the background refresh of what the verification cache holds.
 */

/** A key to verify, and the device asked about (null: none). */
export interface VerificationAsk {
  key: string;
  hwuid: string | null;
}

/**
 * What verification needs, for many keys in one indexed read: each license, its product's
 * features, its seller's tier, its app's token algorithm, and whether the device asked about is
 * bound to it. Answers in the
 * order asked, undefined where no license has the key (or its seller is deleted).
 */
export async function findManyForVerification(executor: Executor, asked: readonly VerificationAsk[]) {
  const result = await verificationLookup.run(executor, {
    keys: asked.map((ask) => ask.key),
    hwuids: asked.map((ask) => ask.hwuid),
  });
  const found: (Omit<(typeof result.rows)[number], 'n'> | undefined)[] = asked.map(() => undefined);
  for (const { n, ...row } of result.rows) found[n - 1] = row;
  return found;
}

// Built once and prepared per connection: this read runs for every batch of verifications the
// cache misses. The keys and devices arrive as two arrays, numbered by `with ordinality`.
const verificationLookup = preparedStatement('license_verification_many', ['keys', 'hwuids'], (executor, p) =>
  verificationColumns(executor)
    .innerJoin(
      sql<{ key: string; hwuid: string | null; n: number }>`(
        select key, hwuid, n::int as n
        from unnest(${p.keys}::text[], ${p.hwuids}::text[]) with ordinality as asked (key, hwuid, n)
      )`.as('asked'),
      'asked.key',
      'l.key',
    )
    // At most one row: (license_id, hwuid) is the primary key. Its label comes along so a call
    // sending another can be told apart without a second read.
    .leftJoin('license_devices as d', (join) =>
      join.onRef('d.license_id', '=', 'l.id').onRef('d.hwuid', '=', 'asked.hwuid'),
    )
    .select([
      'asked.n',
      sql<boolean>`d.hwuid is not null`.as('device_bound'),
      'd.name as device_name',
      'd.platform as device_platform',
    ]),
);

/**
 * The license, its product's features, its seller's tier, how its app's tokens are signed and
 * what its timeline keeps of client addresses: what the cache holds.
 */
const VERIFICATION_COLUMNS = [
  'l.id',
  'l.app_id',
  'l.product_id',
  'l.user_id',
  'l.email',
  'l.status',
  'l.expires_at',
  'l.metadata',
  'l.max_devices',
  'l.features',
  'l.floating',
  'l.created_at',
  'l.check_in_days',
  'l.grace_days',
  'l.checked_in_at',
  'l.expiry_strategy',
  'l.max_uses',
  'l.uses',
  'l.uses_reset_interval',
  'l.uses_period_start',
  // For the per-key verify limit, which scales with seats (key-rate-limit.ts).
  'l.max_seats',
  'l.lease_seconds',
  'p.features as product_features',
  'u.tier',
  'a.token_algorithm',
  // What the license's timeline keeps of a client's address.
  'a.client_addresses',
] as const;

/** The columns above for licenses whose seller is not deleted. */
function verificationColumns(executor: Executor) {
  return executor
    .selectFrom('licenses as l')
    .innerJoin('users as u', 'u.id', 'l.user_id')
    .innerJoin('apps as a', 'a.id', 'l.app_id')
    .leftJoin('products as p', 'p.id', 'l.product_id')
    .select(VERIFICATION_COLUMNS)
    .where('u.deleted_at', 'is', null);
}

/**
 * What `findManyForVerification` reads, with the key, for many licenses by id in one read, and
 * which of the given (license, device) pairs are still bound: the verification cache re-reads the
 * entries in use this way before they expire. A license missing from the answer is gone (its
 * seller deleted).
 */
export async function refreshForVerification(
  executor: Executor,
  ids: readonly string[],
  devices: readonly { licenseId: string; hwuid: string }[],
) {
  const states = ids.length === 0 ? [] : (await refreshStates.run(executor, { ids })).rows;
  const bound =
    devices.length === 0
      ? []
      : (
          await refreshDevices.run(executor, {
            licenseIds: devices.map((device) => device.licenseId),
            hwuids: devices.map((device) => device.hwuid),
          })
        ).rows;
  return { states, bound };
}

// Both prepared, like the lookup above: the cache's background refresh runs them every few
// seconds, and on PGlite a statement's parsing and planning take the event loop from requests.
const refreshStates = preparedStatement('license_verification_refresh', ['ids'], (executor, p) =>
  verificationColumns(executor).select('l.key').where(sql<boolean>`l.id = any(${p.ids}::uuid[])`),
);

const refreshDevices = preparedStatement(
  'license_verification_refresh_devices',
  ['licenseIds', 'hwuids'],
  (executor, p) =>
    executor
      .selectFrom('license_devices as d')
      .innerJoin(
        sql<{ license_id: string; hwuid: string }>`(
          select license_id, hwuid
          from unnest(${p.licenseIds}::uuid[], ${p.hwuids}::text[]) as asked (license_id, hwuid)
        )`.as('asked'),
        (join) => join.onRef('asked.license_id', '=', 'd.license_id').onRef('asked.hwuid', '=', 'd.hwuid'),
      )
      .select(['d.license_id', 'd.hwuid', 'd.name', 'd.platform']),
);

/**
 * Moves each license's last_verified_at forward to the time given, never back (two nodes may
 * flush out of order); licenses deleted since are skipped. The one write of the column: the
 * verification counts' batched flush, off the request.
 */
export async function recordLastVerified(
  executor: Executor,
  verified: readonly { licenseId: string; at: Date }[],
): Promise<void> {
  await sql`
    update licenses as l set last_verified_at = v.at
    from unnest(
      ${verified.map((entry) => entry.licenseId)}::uuid[],
      ${verified.map((entry) => entry.at.toISOString())}::timestamptz[]
    ) as v (id, at)
    where l.id = v.id and (l.last_verified_at is null or l.last_verified_at < v.at)
  `.execute(executor);
}
