import { sql } from 'kysely';
import type { Db, Executor } from '../../platform/db/database.js';
import type { WebhookDeliveryRow } from '../../platform/db/schema.js';
import { newId } from '../../platform/ids.js';
import { MERCHANT_EVENT_TYPES } from '../events/index.js';

/*
 * Fan-out: each recorded event becomes one delivery per endpoint that receives it. The event's
 * audience decides the kind of endpoint, not its name (subscription.created is both): a core
 * event goes to the seller's and admins' endpoints, a merchant event to the product's merchant
 * webhook only.
 */

// Fan-out -----------------------------------------------------------------------------------

/**
 * Turns up to `limit` undelivered events into deliveries for the endpoints subscribed to them,
 * and marks the events dispatched, in one transaction. SKIP LOCKED lets several nodes share the
 * work without handing out an event twice. Returns how many events were handled.
 *
 * With `lease`, up to `lease.limit` of the new deliveries are written already leased to the
 * caller, as claimDue would lease them: the worker sends them without claiming them in a second
 * statement (an UPDATE … RETURNING that would rewrite every new row and send its payload back to
 * be parsed again), and a worker that dies leaves them to other nodes when the lease runs out, as
 * any claimed delivery. They are returned as written.
 */
export async function fanOutEvents(
  db: Db,
  now: Date,
  limit: number,
  lease?: { ms: number; limit: number },
): Promise<{ events: number; leased: WebhookDeliveryRow[] }> {
  return db.transaction().execute(async (trx) => {
    const events = await trx
      .selectFrom('events')
      .select(['id', 'type', 'user_id', 'app_id', 'audience', 'data', 'created_at'])
      .where('dispatched_at', 'is', null)
      .orderBy('seq')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .execute();
    if (events.length === 0) return { events: 0, leased: [] };
    const merchant = await merchantEndpoints(trx, events, now);
    const endpoints = await trx
      .selectFrom('webhook_endpoints as w')
      .innerJoin('users as u', 'u.id', 'w.user_id')
      .select(['w.id', 'w.user_id', 'w.app_id', 'w.events', 'w.created_at', 'u.role'])
      .where('w.enabled', '=', true)
      .where('w.kind', '=', 'core')
      .where('u.deleted_at', 'is', null)
      .where((eb) =>
        eb.or([
          eb('w.user_id', 'in', [
            ...new Set(events.map((e) => e.user_id).filter((id): id is string => id !== null)),
          ]),
          eb('u.role', '=', 'ADMIN'),
        ]),
      )
      .execute();
    const deliveries = events.flatMap((event) =>
      (event.audience === 'merchant'
        ? merchant.filter((m) => m.product_id === event.data.productId)
        : endpoints.filter((endpoint) => endpoint.events.includes(event.type) && receives(endpoint, event))
      ).map(
        (endpoint): WebhookDeliveryRow => ({
          id: newId(),
          endpoint_id: endpoint.id,
          event_id: event.id,
          event_type: event.type,
          payload: event.data,
          event_time: event.created_at,
          trigger: 'auto',
          status: 'pending',
          attempts: 0,
          next_attempt_at: now,
          leased_until: null,
          created_at: now,
          updated_at: now,
        }),
      ),
    );
    const leased = lease ? deliveries.slice(0, lease.limit) : [];
    const leasedUntil = new Date(now.getTime() + (lease?.ms ?? 0));
    for (const delivery of leased) delivery.leased_until = leasedUntil;
    // One array a column, and each payload, type and time copied from its event by the database:
    // a statement of fixed text, where a row of parameters each made hundreds of rows parsed
    // and planned, and every payload went back as JSON it had just been parsed from.
    if (deliveries.length > 0)
      await sql`
        insert into webhook_deliveries (id, endpoint_id, event_id, event_type, payload, event_time,
          trigger, status, attempts, next_attempt_at, leased_until, created_at, updated_at)
        select d.id, d.endpoint_id, e.id, e.type, e.data, e.created_at,
          'auto', 'pending', d.attempts, ${now}::timestamptz, d.leased_until, ${now}::timestamptz, ${now}::timestamptz
        from unnest(
          ${deliveries.map((d) => d.id)}::uuid[],
          ${deliveries.map((d) => d.endpoint_id)}::uuid[],
          ${deliveries.map((d) => d.event_id)}::uuid[],
          ${deliveries.map((d) => d.attempts)}::integer[],
          ${deliveries.map((d) => d.leased_until)}::timestamptz[]
        ) as d (id, endpoint_id, event_id, attempts, leased_until)
        join events e on e.id = d.event_id`.execute(trx);
    await sql`
      update events set dispatched_at = ${now}::timestamptz
      where id = any(${events.map((e) => e.id)}::uuid[])`.execute(trx);
    return { events: events.length, leased };
  });
}

/**
 * The merchant endpoints of the products these events concern, made or pointed at the product's
 * current merchantWebhookUrl. A product without one gets no deliveries.
 */
async function merchantEndpoints(
  trx: Executor,
  events: readonly { audience: string; data: Record<string, unknown> }[],
  now: Date,
) {
  const productIds = [
    ...new Set(
      events
        .filter((event) => event.audience === 'merchant' && typeof event.data.productId === 'string')
        .map((event) => event.data.productId as string),
    ),
  ];
  if (productIds.length === 0) return [];
  const products = await trx
    .selectFrom('products')
    .select(['id', 'user_id', 'app_id', 'merchant_webhook_url'])
    .where('id', 'in', productIds)
    .where('merchant_webhook_url', 'is not', null)
    .execute();
  if (products.length === 0) return [];
  return trx
    .insertInto('webhook_endpoints')
    .values(
      products.map((product) => ({
        id: newId(),
        user_id: product.user_id,
        app_id: product.app_id,
        kind: 'merchant' as const,
        product_id: product.id,
        url: product.merchant_webhook_url as string,
        events: [...MERCHANT_EVENT_TYPES],
        // Merchant deliveries are signed with the product's callback secret at send time.
        secret: '',
        created_at: now,
        updated_at: now,
      })),
    )
    .onConflict((oc) =>
      oc
        .column('product_id')
        .where('kind', '=', 'merchant')
        .doUpdateSet((eb) => ({ url: eb.ref('excluded.url'), updated_at: now })),
    )
    .returning(['id', 'product_id'])
    .execute();
}

/**
 * A seller's endpoint gets its own events (of its app, when bound to one); admins' get platform
 * events. Only events from the endpoint's creation on: a subscription does not reach back.
 */
function receives(
  endpoint: { user_id: string; app_id: string | null; role: string; created_at: Date },
  event: { type: string; user_id: string | null; app_id: string | null; created_at: Date },
): boolean {
  if (event.created_at < endpoint.created_at) return false;
  if (event.type === 'user.registered')
    return endpoint.role === 'ADMIN' || endpoint.user_id === event.user_id;
  if (endpoint.user_id !== event.user_id) return false;
  return endpoint.app_id === null || endpoint.app_id === event.app_id;
}
