import type { Db, Executor } from '../../platform/db/database.js';
import type { WebhookEndpointRow } from '../../platform/db/schema.js';
import { newId } from '../../platform/ids.js';

/*
 * Webhook endpoints: a seller's (or an admin's) receivers, their events and their state.
 */

export interface PageByNumber {
  page: number;
  limit: number;
}

// Endpoints ---------------------------------------------------------------------------------

export function insertEndpoint(
  executor: Executor,
  endpoint: {
    userId: string;
    appId: string | null;
    url: string;
    events: string[];
    secret: string;
    now: Date;
  },
): Promise<WebhookEndpointRow> {
  return executor
    .insertInto('webhook_endpoints')
    .values({
      id: newId(),
      user_id: endpoint.userId,
      app_id: endpoint.appId,
      url: endpoint.url,
      events: endpoint.events,
      secret: endpoint.secret,
      created_at: endpoint.now,
      updated_at: endpoint.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findEndpoint(executor: Executor, userId: string, id: string) {
  return executor
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('kind', '=', 'core')
    .executeTakeFirst();
}

/**
 * A seller's product with its merchant endpoint (null until its first merchant event), and
 * where and how that endpoint sends now: the product's current URL and callback secret.
 */
export function findMerchantTarget(executor: Executor, userId: string, productId: string) {
  return executor
    .selectFrom('products as p')
    .leftJoin('webhook_endpoints as w', (join) =>
      join.onRef('w.product_id', '=', 'p.id').on('w.kind', '=', 'merchant'),
    )
    .select([
      'p.app_id',
      'p.merchant_webhook_url as url',
      'p.callback_secret as secret',
      'w.id as endpoint_id',
    ])
    .where('p.id', '=', productId)
    .where('p.user_id', '=', userId)
    .executeTakeFirst();
}

export async function listEndpoints(
  executor: Executor,
  userId: string,
  onlyAppId: string | null,
  page: PageByNumber,
) {
  let query = executor
    .selectFrom('webhook_endpoints')
    .where('user_id', '=', userId)
    .where('kind', '=', 'core');
  if (onlyAppId) query = query.where('app_id', '=', onlyAppId);
  const [rows, total] = await Promise.all([
    query
      .selectAll()
      .orderBy('created_at')
      .orderBy('id')
      .limit(page.limit)
      .offset((page.page - 1) * page.limit)
      .execute(),
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.total) };
}

export function updateEndpoint(
  executor: Executor,
  id: string,
  changes: { url?: string; events?: string[]; secret?: string; now: Date },
): Promise<WebhookEndpointRow | undefined> {
  return executor
    .updateTable('webhook_endpoints')
    .set({
      ...(changes.url !== undefined ? { url: changes.url } : {}),
      ...(changes.events !== undefined ? { events: changes.events } : {}),
      ...(changes.secret !== undefined ? { secret: changes.secret } : {}),
      updated_at: changes.now,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirst();
}

/** Enables (clearing the failure record) or disables an endpoint; disabling cancels what is pending. */
export async function setEndpointEnabled(
  db: Db,
  id: string,
  enabled: boolean,
  reason: string | null,
  now: Date,
) {
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .updateTable('webhook_endpoints')
      .set(
        enabled
          ? { enabled, disabled_reason: null, consecutive_failures: 0, failing_since: null, updated_at: now }
          : { enabled, disabled_reason: reason, updated_at: now },
      )
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirst();
    if (!enabled) {
      await trx
        .updateTable('webhook_deliveries')
        .set({ status: 'canceled', next_attempt_at: null, leased_until: null, updated_at: now })
        .where('endpoint_id', '=', id)
        .where('status', '=', 'pending')
        .execute();
    }
    return row;
  });
}

export async function deleteEndpoint(executor: Executor, userId: string, id: string): Promise<boolean> {
  const row = await executor
    .deleteFrom('webhook_endpoints')
    .where('id', '=', id)
    .where('user_id', '=', userId)
    .where('kind', '=', 'core')
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}
