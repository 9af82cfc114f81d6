import { sql } from 'kysely';
import type { Db, Executor } from '../../platform/db/database.js';
import type { DeliveryTrigger, WebhookDeliveryRow, WebhookEndpointRow } from '../../platform/db/schema.js';
import { newId } from '../../platform/ids.js';
import { isMerchantEvent, MERCHANT_EVENT_TYPES } from '../events/index.js';

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
      .select(['id', 'type', 'user_id', 'app_id', 'data', 'created_at'])
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
      [
        ...endpoints.filter((endpoint) => endpoint.events.includes(event.type) && receives(endpoint, event)),
        ...(isMerchantEvent(event.type) ? merchant.filter((m) => m.product_id === event.data.productId) : []),
      ].map(
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
  events: readonly { type: string; data: Record<string, unknown> }[],
  now: Date,
) {
  const productIds = [
    ...new Set(
      events
        .filter((event) => isMerchantEvent(event.type) && typeof event.data.productId === 'string')
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

/**
 * Whether a pass of the worker has anything to do: an event not fanned out yet, or a delivery
 * claimDue would take. One read of the two partial indexes made for these questions, so an idle
 * node's poll (five a second) is one statement instead of a transaction and a locking update: on
 * PGlite, which runs on the event loop, that was 5 ms of every 200.
 */
export async function hasWork(executor: Executor, now: Date): Promise<boolean> {
  const { rows } = await sql<{ due: boolean }>`
    select exists (select 1 from events where dispatched_at is null)
      or exists (
        select 1 from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id
        where d.status = 'pending' and d.next_attempt_at <= ${now}::timestamptz
          and (d.leased_until is null or d.leased_until <= ${now}::timestamptz)
          and w.enabled
      ) as due`.execute(executor);
  return rows[0]?.due === true;
}

// Attempts ----------------------------------------------------------------------------------

export type ClaimedDelivery = WebhookDeliveryRow & {
  /** Null for a merchant endpoint whose product dropped its URL. */
  url: string | null;
  secret: string;
  kind: 'core' | 'merchant';
};

/**
 * Leases up to `limit` due deliveries of enabled endpoints to this worker, at most `perEndpoint`
 * of any one endpoint and none of the endpoints in `skip` (those the worker already holds enough
 * of), so a slow receiver's backlog does not fill the worker. The lease is the worker's to renew
 * (renewLeases); a worker that dies leaves it to run out, and the delivery is taken again with
 * the same event id. Nothing is counted here: an attempt counts when its outcome is settled.
 * Deliveries the caller leased already (at fan-out) come back first, their targets found in the
 * same lookup.
 */
export async function claimDue(
  db: Db,
  now: Date,
  lease: { ms: number; limit: number; perEndpoint: number; skip: readonly string[] },
  leased: readonly WebhookDeliveryRow[] = [],
): Promise<ClaimedDelivery[]> {
  if (lease.limit <= 0) return withTargets(db, leased);
  const leasedUntil = new Date(now.getTime() + lease.ms);
  // The window picks the candidates; the outer select locks them (FOR UPDATE cannot sit beside
  // a window function), skipping those another worker is claiming.
  const { rows: claimed } = await sql<WebhookDeliveryRow>`
    update webhook_deliveries set leased_until = ${leasedUntil}::timestamptz, updated_at = ${now}::timestamptz
    where id in (
      select d.id from webhook_deliveries d
      where d.id in (
        select c.id from (
          select d.id, d.next_attempt_at,
            row_number() over (partition by d.endpoint_id order by d.next_attempt_at, d.id) as n
          from webhook_deliveries d join webhook_endpoints w on w.id = d.endpoint_id
          where d.status = 'pending' and d.next_attempt_at <= ${now}::timestamptz
            and (d.leased_until is null or d.leased_until <= ${now}::timestamptz)
            and w.enabled and d.endpoint_id <> all(${[...lease.skip]}::uuid[])
        ) c
        where c.n <= ${lease.perEndpoint}
        order by c.next_attempt_at
        limit ${lease.limit}
      )
      and d.status = 'pending' and (d.leased_until is null or d.leased_until <= ${now}::timestamptz)
      for update skip locked
    )
    returning *`.execute(db);
  return withTargets(db, [...leased, ...claimed]);
}

/**
 * Extends the leases this worker still holds to `until`, each only while it holds the lease it
 * names; returns the ids extended. One that is not was settled or cancelled by someone else
 * (a resend by hand, the endpoint switched off) or, after a long stall, taken by another worker.
 */
export function renewLeases(
  executor: Executor,
  held: readonly HeldLease[],
  until: Date,
): Promise<Set<string>> {
  return moveLeases(executor, held, until);
}

/** A lease as this worker holds it: a delivery and the end of the lease it took or renewed. */
export interface HeldLease {
  id: string;
  leasedUntil: Date;
}

/** Sets each lease to `to`, only while the lease it names still holds it; returns the ids set. */
async function moveLeases(
  executor: Executor,
  held: readonly HeldLease[],
  to: Date | null,
): Promise<Set<string>> {
  if (held.length === 0) return new Set();
  const { rows } = await sql<{ id: string }>`
    update webhook_deliveries d set leased_until = ${to}::timestamptz
    from unnest(
      ${held.map((h) => h.id)}::uuid[],
      ${held.map((h) => h.leasedUntil)}::timestamptz[]
    ) as v (id, leased_until)
    where d.id = v.id and d.leased_until = v.leased_until
    returning d.id`.execute(executor);
  return new Set(rows.map((row) => row.id));
}

/**
 * Leased deliveries with where and how each is sent: the endpoint's URL and secret, or for a
 * merchant endpoint its product's current URL and callback secret. A delivery whose endpoint
 * is gone is left out (its lease runs out; deleting an endpoint deletes its deliveries).
 */
async function withTargets(db: Db, leased: readonly WebhookDeliveryRow[]): Promise<ClaimedDelivery[]> {
  if (leased.length === 0) return [];
  const endpoints = await db
    .selectFrom('webhook_endpoints as w')
    .leftJoin('products as p', 'p.id', 'w.product_id')
    .select((eb) => [
      'w.id',
      'w.kind',
      eb
        .case()
        .when('w.kind', '=', 'merchant')
        .then(eb.ref('p.merchant_webhook_url'))
        .else(eb.ref('w.url'))
        .end()
        .as('url'),
      eb
        .case()
        .when('w.kind', '=', 'merchant')
        .then(eb.ref('p.callback_secret'))
        .else(eb.ref('w.secret'))
        .end()
        .as('secret'),
    ])
    .where('w.id', 'in', [...new Set(leased.map((d) => d.endpoint_id))])
    .execute();
  const byId = new Map(endpoints.map((e) => [e.id, e]));
  return leased.flatMap((delivery) => {
    const endpoint = byId.get(delivery.endpoint_id);
    return endpoint
      ? [{ ...delivery, url: endpoint.url, secret: endpoint.secret ?? '', kind: endpoint.kind }]
      : [];
  });
}

export interface AttemptRecord {
  deliveryId: string;
  endpointId: string;
  attempt: number;
  trigger: DeliveryTrigger;
  statusCode: number;
  responseBody: string;
  success: boolean;
  durationMs: number;
  error: string | null;
  at: Date;
}

/** Logs attempts, one array a column (each record's `attempt` is its number). */
async function insertAttempts(executor: Executor, records: readonly AttemptRecord[]): Promise<void> {
  if (records.length === 0) return;
  await sql`
    insert into webhook_attempts (id, delivery_id, endpoint_id, attempt, trigger, status_code,
      response_body, success, duration_ms, error, created_at)
    select * from unnest(
      ${records.map(() => newId())}::uuid[],
      ${records.map((r) => r.deliveryId)}::uuid[],
      ${records.map((r) => r.endpointId)}::uuid[],
      ${records.map((r) => r.attempt)}::integer[],
      ${records.map((r) => r.trigger)}::text[],
      ${records.map((r) => r.statusCode)}::integer[],
      ${records.map((r) => r.responseBody)}::text[],
      ${records.map((r) => r.success)}::boolean[],
      ${records.map((r) => r.durationMs)}::integer[],
      ${records.map((r) => r.error)}::text[],
      ${records.map((r) => r.at)}::timestamptz[]
    )`.execute(executor);
}

/**
 * Logs an attempt and settles its delivery (succeeded, failed, or pending again at `retryAt`),
 * and keeps the endpoint's health record. A delivery whose lease this worker lost (it ran out
 * and another worker took over) is left alone, and so is one when `next` is null.
 */
export async function recordAttempt(
  db: Db,
  record: AttemptRecord,
  next: { status: 'succeeded' | 'failed' | 'pending'; retryAt: Date | null; leasedUntil: Date | null } | null,
) {
  return db.transaction().execute(async (trx) => {
    // Rows are locked endpoint first, then delivery — the order disabling an endpoint uses too,
    // so the two never wait on each other.
    const endpoint = await trx
      .updateTable('webhook_endpoints')
      .set(
        record.success
          ? { consecutive_failures: 0, failing_since: null, last_success_at: record.at }
          : (eb) => ({
              consecutive_failures: eb('consecutive_failures', '+', 1),
              failing_since: eb.fn.coalesce('failing_since', eb.val(record.at)),
              last_failure_at: record.at,
            }),
      )
      .where('id', '=', record.endpointId)
      .returningAll()
      .executeTakeFirst();
    if (next) {
      let settle = trx
        .updateTable('webhook_deliveries')
        .set({
          status: next.status,
          next_attempt_at: next.retryAt,
          leased_until: null,
          updated_at: record.at,
        })
        .where('id', '=', record.deliveryId);
      if (next.leasedUntil) settle = settle.where('leased_until', '=', next.leasedUntil);
      await settle.execute();
    }
    await insertAttempts(trx, [record]);
    return endpoint;
  });
}

export interface Settlement {
  /** Its `attempt` is given by the settling: the delivery's count of attempts made, plus one. */
  record: AttemptRecord;
  /** The delivery's next state; applied only while this worker's lease still holds it. */
  next: { status: 'succeeded' | 'failed' | 'pending'; retryAt: Date | null; leasedUntil: Date };
}

/**
 * recordAttempt for many attempts at once, in one transaction of four statements: the health of
 * each endpoint (its attempts applied in the order given), the deliveries settled, the attempts
 * logged. Every attempt is counted on its delivery and logged under the number that count gives
 * it, even when the lease was lost meanwhile (the attempt was made all the same); only the state
 * waits on the lease. An attempt of a delivery deleted meanwhile (its endpoint was) is dropped.
 * Returns the endpoints as they stand after.
 */
export async function settleAttempts(
  db: Db,
  settlements: readonly Settlement[],
): Promise<WebhookEndpointRow[]> {
  if (settlements.length === 0) return [];
  const health = new Map<
    string,
    {
      reset: boolean;
      failures: number;
      failingSince: Date | null;
      lastSuccess: Date | null;
      lastFailure: Date | null;
    }
  >();
  for (const { record } of settlements) {
    const h = health.get(record.endpointId) ?? {
      reset: false,
      failures: 0,
      failingSince: null,
      lastSuccess: null,
      lastFailure: null,
    };
    if (record.success)
      Object.assign(h, { reset: true, failures: 0, failingSince: null, lastSuccess: record.at });
    else {
      h.failures += 1;
      h.failingSince ??= record.at;
      h.lastFailure = record.at;
    }
    health.set(record.endpointId, h);
  }
  return db.transaction().execute(async (trx) => {
    // Endpoints first, in id order, then deliveries: the order recordAttempt and disabling use,
    // so workers settling at once never wait on each other in a cycle.
    const endpointIds = [...health.keys()].sort();
    await trx
      .selectFrom('webhook_endpoints')
      .select('id')
      .where('id', 'in', endpointIds)
      .orderBy('id')
      .forUpdate()
      .execute();
    const endpointRows = sql.join(
      endpointIds.map((id) => {
        const h = health.get(id) as NonNullable<ReturnType<typeof health.get>>;
        return sql`(${id}::uuid, ${h.reset}::boolean, ${h.failures}::integer, ${h.failingSince}::timestamptz, ${h.lastSuccess}::timestamptz, ${h.lastFailure}::timestamptz)`;
      }),
    );
    const { rows: endpoints } = await sql<WebhookEndpointRow>`
      update webhook_endpoints w set
        consecutive_failures = case when v.reset then v.failures else w.consecutive_failures + v.failures end,
        failing_since = case when v.reset then v.failing_since else coalesce(w.failing_since, v.failing_since) end,
        last_success_at = coalesce(v.last_success, w.last_success_at),
        last_failure_at = coalesce(v.last_failure, w.last_failure_at)
      from (values ${endpointRows}) as v (id, reset, failures, failing_since, last_success, last_failure)
      where w.id = v.id
      returning w.*`.execute(trx);
    // One array a column (see fanOutEvents): the same text whatever the chunk's size. An update
    // changes a row once however often it is named, so a delivery attempted twice in the chunk
    // is settled in a second round.
    const logged: AttemptRecord[] = [];
    for (const round of rounds(settlements)) {
      const { rows } = await sql<{ id: string; attempts: number }>`
        update webhook_deliveries d set
          attempts = d.attempts + 1,
          status = case when d.leased_until = v.leased_until then v.status else d.status end,
          next_attempt_at = case when d.leased_until = v.leased_until then v.retry_at else d.next_attempt_at end,
          leased_until = case when d.leased_until = v.leased_until then null else d.leased_until end,
          updated_at = v.at
        from unnest(
          ${round.map(({ record }) => record.deliveryId)}::uuid[],
          ${round.map(({ next }) => next.status)}::text[],
          ${round.map(({ next }) => next.retryAt)}::timestamptz[],
          ${round.map(({ next }) => next.leasedUntil)}::timestamptz[],
          ${round.map(({ record }) => record.at)}::timestamptz[]
        ) as v (id, status, retry_at, leased_until, at)
        where d.id = v.id
        returning d.id, d.attempts`.execute(trx);
      const numbers = new Map(rows.map((row) => [row.id, row.attempts]));
      for (const { record } of round) {
        const attempt = numbers.get(record.deliveryId);
        if (attempt !== undefined) logged.push({ ...record, attempt });
      }
    }
    await insertAttempts(trx, logged);
    return endpoints;
  });
}

/** Settlements split, in order, into rounds that name each delivery at most once. */
function rounds(settlements: readonly Settlement[]): Settlement[][] {
  const result: { ids: Set<string>; items: Settlement[] }[] = [];
  for (const settlement of settlements) {
    const id = settlement.record.deliveryId;
    let round = result.find((r) => !r.ids.has(id));
    if (!round) {
      round = { ids: new Set(), items: [] };
      result.push(round);
    }
    round.ids.add(id);
    round.items.push(settlement);
  }
  return result.map((r) => r.items);
}

/** Hands claimed deliveries back unsent, each while the lease it names still holds it. */
export async function releaseLeases(executor: Executor, held: readonly HeldLease[]): Promise<void> {
  await moveLeases(executor, held, null);
}

export function insertDelivery(
  executor: Executor,
  delivery: {
    endpointId: string;
    eventType: string;
    payload: Record<string, unknown>;
    eventTime: Date;
    trigger: DeliveryTrigger;
    now: Date;
  },
): Promise<WebhookDeliveryRow> {
  return executor
    .insertInto('webhook_deliveries')
    .values({
      id: newId(),
      endpoint_id: delivery.endpointId,
      event_id: null,
      event_type: delivery.eventType,
      payload: JSON.stringify(delivery.payload),
      event_time: delivery.eventTime,
      trigger: delivery.trigger,
      attempts: 1,
      next_attempt_at: null,
      created_at: delivery.now,
      updated_at: delivery.now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export function findDelivery(executor: Executor, endpointId: string, deliveryId: string) {
  return executor
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('id', '=', deliveryId)
    .where('endpoint_id', '=', endpointId)
    .executeTakeFirst();
}

export async function bumpAttempts(executor: Executor, deliveryId: string): Promise<number> {
  const row = await executor
    .updateTable('webhook_deliveries')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('id', '=', deliveryId)
    .returning('attempts')
    .executeTakeFirstOrThrow();
  return row.attempts;
}

export async function listAttempts(executor: Executor, endpointId: string, page: PageByNumber) {
  const query = executor.selectFrom('webhook_attempts as a').where('a.endpoint_id', '=', endpointId);
  const [rows, total] = await Promise.all([
    query
      .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
      .select([
        'a.id',
        'a.delivery_id',
        'd.event_id',
        'd.event_type',
        'a.attempt',
        'a.trigger',
        'a.status_code',
        'a.response_body',
        'a.success',
        'a.duration_ms',
        'a.error',
        'a.created_at',
      ])
      .orderBy('a.created_at', 'desc')
      .orderBy('a.id', 'desc')
      .limit(page.limit)
      .offset((page.page - 1) * page.limit)
      .execute(),
    query.select((eb) => eb.fn.countAll<number>().as('total')).executeTakeFirstOrThrow(),
  ]);
  return { rows, total: Number(total.total) };
}

export async function purgeAttempts(executor: Executor, before: Date): Promise<number> {
  const rows = await executor
    .deleteFrom('webhook_attempts')
    .where('created_at', '<', before)
    .returning('id')
    .execute();
  return rows.length;
}

/** Deliveries waiting (pending) and core endpoints failing or switched off, for the metrics. */
export async function deliveryBacklog(
  executor: Executor,
): Promise<{ pending: number; endpointsFailing: number; endpointsDisabled: number }> {
  const [deliveries, endpoints] = await Promise.all([
    executor
      .selectFrom('webhook_deliveries')
      .where('status', '=', 'pending')
      .select((eb) => eb.fn.countAll<number>().as('pending'))
      .executeTakeFirstOrThrow(),
    executor
      .selectFrom('webhook_endpoints')
      .where('kind', '=', 'core')
      .select((eb) => [
        eb.fn.countAll<number>().filterWhere('enabled', '=', false).as('disabled'),
        eb.fn
          .countAll<number>()
          .filterWhere((w) => w.and([w('enabled', '=', true), w('failing_since', 'is not', null)]))
          .as('failing'),
      ])
      .executeTakeFirstOrThrow(),
  ]);
  return {
    pending: Number(deliveries.pending),
    endpointsFailing: Number(endpoints.failing),
    endpointsDisabled: Number(endpoints.disabled),
  };
}
