import type { Executor } from '../../platform/db/database.js';
import type { AppRow, ClientAddressPolicy, SigningAlgorithm } from '../../platform/db/schema.js';
import type { Page } from '../../platform/http/schemas.js';

export function findOwnedApp(
  executor: Executor,
  userId: string,
  appId: string,
  options: { forUpdate?: boolean } = {},
): Promise<AppRow | undefined> {
  const query = executor.selectFrom('apps').selectAll().where('id', '=', appId).where('user_id', '=', userId);
  return (options.forUpdate ? query.forUpdate() : query).executeTakeFirst();
}

/** The app with this id, whoever owns it: for the operator (the command line), never a route. */
export function findAppById(executor: Executor, appId: string): Promise<AppRow | undefined> {
  return executor.selectFrom('apps').selectAll().where('id', '=', appId).executeTakeFirst();
}

export function insertApp(
  executor: Executor,
  app: {
    id: string;
    userId: string;
    name: string;
    description: string;
    tokenAlgorithm: SigningAlgorithm;
    clientAddresses: ClientAddressPolicy;
    now: Date;
  },
): Promise<AppRow> {
  return executor
    .insertInto('apps')
    .values({
      id: app.id,
      user_id: app.userId,
      name: app.name,
      description: app.description,
      token_algorithm: app.tokenAlgorithm,
      client_addresses: app.clientAddresses,
      created_at: app.now,
      updated_at: app.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function updateApp(
  executor: Executor,
  userId: string,
  appId: string,
  changes: {
    name?: string;
    description?: string;
    tokenAlgorithm?: SigningAlgorithm;
    clientAddresses?: ClientAddressPolicy;
    now: Date;
  },
): Promise<AppRow | undefined> {
  return executor
    .updateTable('apps')
    .set({
      ...(changes.name !== undefined ? { name: changes.name } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      ...(changes.tokenAlgorithm !== undefined ? { token_algorithm: changes.tokenAlgorithm } : {}),
      ...(changes.clientAddresses !== undefined ? { client_addresses: changes.clientAddresses } : {}),
      updated_at: changes.now,
    })
    .where('id', '=', appId)
    .where('user_id', '=', userId)
    .returningAll()
    .executeTakeFirst();
}

export async function deleteApp(executor: Executor, userId: string, appId: string): Promise<boolean> {
  const row = await executor
    .deleteFrom('apps')
    .where('id', '=', appId)
    .where('user_id', '=', userId)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** The seller's apps; an API key sees only the app it belongs to. */
export async function listApps(executor: Executor, userId: string, onlyAppId: string | null, page: Page) {
  let query = executor.selectFrom('apps').where('user_id', '=', userId);
  if (onlyAppId) query = query.where('id', '=', onlyAppId);
  const [rows, total] = await Promise.all([
    query.selectAll().orderBy('created_at').orderBy('id').limit(page.limit).offset(page.offset).execute(),
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.total) };
}
