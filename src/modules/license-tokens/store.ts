import { type ExpressionBuilder, sql } from 'kysely';
import type { Db, Executor } from '../../platform/db/database.js';
import type { Schema, SigningAlgorithm, SigningKeyPurpose, SigningKeyRow } from '../../platform/db/schema.js';

/**
 * Whether a key is published at `now` (in the JWKS): published by then, and not yet retired or
 * still vouching for an unexpired license file (license_file_keys, migration 0017).
 */
function isPublished(eb: ExpressionBuilder<Schema, 'signing_keys'>, now: Date) {
  return eb.and([
    eb('published_at', '<=', now),
    eb.or([
      eb('unpublish_at', 'is', null),
      eb('unpublish_at', '>', now),
      sql<boolean>`exists (select 1 from license_file_keys f where f.kid = signing_keys.kid and f.files_valid_until > ${now})`,
    ]),
  ]);
}

/**
 * Keys still published at `now`, oldest activation first (keys activated together, one of each
 * algorithm, by kid: every node serves one order).
 */
export function publishedKeys(executor: Executor, now: Date): Promise<SigningKeyRow[]> {
  return executor
    .selectFrom('signing_keys')
    .selectAll()
    .where((eb) => isPublished(eb, now))
    .orderBy('activates_at')
    .orderBy('kid')
    .execute();
}

/** Every key, retired ones too, in publishedKeys' order: its dates and whether it is published, never its private part. */
export function describeKeys(executor: Executor, now: Date) {
  return executor
    .selectFrom('signing_keys')
    .select((eb) => [
      'kid',
      'purpose',
      'algorithm',
      'published_at',
      'activates_at',
      'unpublish_at',
      isPublished(eb, now).as('published'),
    ])
    .orderBy('activates_at')
    .orderBy('kid')
    .execute();
}

/** Keeps a key published at least until `until`: it signed a license file valid that long. */
export async function keepKeyForLicenseFile(executor: Executor, kid: string, until: Date): Promise<void> {
  await sql`
    insert into license_file_keys (kid, files_valid_until) values (${kid}, ${until})
    on conflict (kid) do update
      set files_valid_until = greatest(license_file_keys.files_valid_until, excluded.files_valid_until)
  `.execute(executor);
}

// Any constant; the same on every node.
const KEY_CREATION_LOCK = 727_274_002;

type NewKey = Omit<SigningKeyRow, 'published_at' | 'activates_at' | 'unpublish_at'>;

/**
 * Runs `create` only if no key of its purpose and algorithm is published, holding a
 * transaction-scoped advisory lock so nodes starting together create one key between them.
 */
export async function createFirstKeyOnce(
  db: Db,
  now: Date,
  purpose: SigningKeyPurpose,
  algorithm: SigningAlgorithm,
  create: () => NewKey,
) {
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${KEY_CREATION_LOCK})`.execute(trx);
    // Any key not retired counts, whenever it was published: a node starting a moment later
    // may have published one at an instant after this node's `now`.
    const existing = await trx
      .selectFrom('signing_keys')
      .select('kid')
      .where('purpose', '=', purpose)
      .where('algorithm', '=', algorithm)
      .where((eb) => eb.or([eb('unpublish_at', 'is', null), eb('unpublish_at', '>', now)]))
      .limit(1)
      .execute();
    if (existing.length > 0) return;
    const key = create();
    await trx
      .insertInto('signing_keys')
      .values({
        ...key,
        public_jwk: JSON.stringify(key.public_jwk),
        published_at: now,
        activates_at: now,
        unpublish_at: null,
      })
      .execute();
  });
}

/**
 * Adds the new keys of `purpose` (one per algorithm) and schedules every key of that purpose
 * they replace to leave the JWKS, in one transaction.
 */
export async function addRotatedKeys(
  db: Db,
  purpose: SigningKeyPurpose,
  keys: Omit<SigningKeyRow, 'unpublish_at'>[],
  retireOthersAt: Date,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${KEY_CREATION_LOCK})`.execute(trx);
    await trx
      .updateTable('signing_keys')
      .set({ unpublish_at: retireOthersAt })
      .where('purpose', '=', purpose)
      .where((eb) => eb.or([eb('unpublish_at', 'is', null), eb('unpublish_at', '>', retireOthersAt)]))
      .execute();
    await trx
      .insertInto('signing_keys')
      .values(keys.map((key) => ({ ...key, public_jwk: JSON.stringify(key.public_jwk), unpublish_at: null })))
      .execute();
  });
}

/**
 * Rewrites, under the key lock, every stored private key `reseal` answers a new form for
 * (null: keep), all in one transaction; answers how many were rewritten. Retired keys too:
 * no private key is left readable at rest.
 */
export async function resealKeys(
  db: Db,
  reseal: (kid: string, stored: string) => string | null,
): Promise<number> {
  return db.transaction().execute(async (trx) => {
    await sql`select pg_advisory_xact_lock(${KEY_CREATION_LOCK})`.execute(trx);
    const rows = await trx.selectFrom('signing_keys').select(['kid', 'sealed_private_key']).execute();
    let rewritten = 0;
    for (const row of rows) {
      const sealed = reseal(row.kid, row.sealed_private_key);
      if (sealed === null) continue;
      await trx
        .updateTable('signing_keys')
        .set({ sealed_private_key: sealed })
        .where('kid', '=', row.kid)
        .execute();
      rewritten++;
    }
    return rewritten;
  });
}

export async function denyToken(
  executor: Executor,
  jti: string,
  licenseId: string,
  expiresAt: Date,
  now: Date,
) {
  await executor
    .insertInto('revoked_tokens')
    .values({ jti, license_id: licenseId, expires_at: expiresAt, revoked_at: now })
    .onConflict((oc) => oc.column('jti').doNothing())
    .execute();
}

export async function isTokenDenied(executor: Executor, jti: string): Promise<boolean> {
  const row = await executor
    .selectFrom('revoked_tokens')
    .select('jti')
    .where('jti', '=', jti)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Denylist entries of tokens that have expired anyway are no longer needed — once past the
 * clock tolerance within which introspection still grants an expired token.
 */
export async function purgeDeniedTokens(
  executor: Executor,
  now: Date,
  toleranceSeconds: number,
): Promise<number> {
  const cutoff = new Date(now.getTime() - toleranceSeconds * 1000);
  const rows = await executor
    .deleteFrom('revoked_tokens')
    .where('expires_at', '<=', cutoff)
    .returning('jti')
    .execute();
  return rows.length;
}
