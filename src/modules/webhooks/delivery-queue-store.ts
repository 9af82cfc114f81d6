import { sql } from 'kysely';
import type { Db, Executor } from '../../platform/db/database.js';
import type { DeliveryTrigger, WebhookDeliveryRow, WebhookEndpointRow } from '../../platform/db/schema.js';
import { newId } from '../../platform/ids.js';
import { type AttemptRecord, insertAttempts } from './attempt-log-store.js';

/*
 * The delivery queue: what is due, claimed under a lease that is renewed while it is in flight,
 * settled once its attempt is known, and the backlog figures.
 */

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
    await recordGivenUp(
      trx,
      settlements.filter(({ next }) => next.status === 'failed').map(({ record }) => record),
    );
    return endpoints;
  });
}

/**
 * Deliveries given up on (no retry left), each in the timeline of the license its event is
 * about, as recordEvent linked the event (events/store.ts names the license the same way). Only
 * those this worker settled as failed: one whose lease was lost is another worker's to settle.
 */
async function recordGivenUp(trx: Executor, records: readonly AttemptRecord[]): Promise<void> {
  if (records.length === 0) return;
  await sql`
    insert into license_events (id, license_id, user_id, app_id, type, outcome, data, occurred_at)
    select v.entry_id, l.id, l.user_id, l.app_id, 'webhook.failed', 'failed',
      jsonb_build_object('eventId', d.event_id, 'eventType', d.event_type, 'endpointId', d.endpoint_id,
        'deliveryId', d.id, 'attempts', d.attempts, 'statusCode', v.status_code),
      v.at
    from unnest(
      ${records.map(() => newId())}::uuid[],
      ${records.map((record) => record.deliveryId)}::uuid[],
      ${records.map((record) => record.statusCode)}::integer[],
      ${records.map((record) => record.at)}::timestamptz[]
    ) as v (entry_id, delivery_id, status_code, at)
    join webhook_deliveries d on d.id = v.delivery_id and d.status = 'failed'
    join events e on e.id = d.event_id
    join licenses l on l.id = (case
      when e.type like 'trial.%' then e.data->>'id'
      when e.type like 'license.%' then coalesce(e.data->>'licenseId', e.data->>'id')
      else e.data->>'licenseId' end)::uuid
  `.execute(trx);
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
