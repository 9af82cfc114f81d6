import type { Executor } from '../../platform/db/database.js';
import type { ApiKeyRow } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/schemas.js';

export function insertApiKey(
  executor: Executor,
  key: { id: string; userId: string; appId: string; name: string; prefix: string; hash: string; now: Date },
): Promise<ApiKeyRow> {
  return executor
    .insertInto('api_keys')
    .values({
      id: key.id,
      user_id: key.userId,
      app_id: key.appId,
      name: key.name,
      prefix: key.prefix,
      key_hash: key.hash,
      created_at: key.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function listApiKeys(executor: Executor, appId: string, page: Page) {
  const query = executor.selectFrom('api_keys').where('app_id', '=', appId);
  const [rows, total] = await Promise.all([
    query.selectAll().orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.total) };
}

/** Revokes once; a key already revoked keeps its first revocation time. */
export function revokeApiKey(
  executor: Executor,
  appId: string,
  keyId: string,
  now: Date,
): Promise<ApiKeyRow | undefined> {
  return executor
    .updateTable('api_keys')
    .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(now)) }))
    .where('id', '=', keyId)
    .where('app_id', '=', appId)
    .returningAll()
    .executeTakeFirst();
}

/**
 * One index probe: the live key with this hash and the live seller who owns it. Reading the
 * owner's role, tier and deletion here, rather than through the users module, keeps every
 * API-key request at a single query.
 */
export function findActiveKeyByHash(executor: Executor, hash: string) {
  return executor
    .selectFrom('api_keys as k')
    .innerJoin('users as u', 'u.id', 'k.user_id')
    .select(['k.id', 'k.app_id', 'k.last_used_at', 'u.id as user_id', 'u.role', 'u.tier'])
    .where('k.key_hash', '=', hash)
    .where('k.revoked_at', 'is', null)
    .where('u.deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function touchApiKey(executor: Executor, keyId: string, now: Date): Promise<void> {
  await executor.updateTable('api_keys').set({ last_used_at: now }).where('id', '=', keyId).execute();
}
