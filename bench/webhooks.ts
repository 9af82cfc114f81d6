import { execFileSync } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { sql } from 'kysely';
import { PER_ENDPOINT_CONCURRENCY } from '../src/modules/webhooks/delivery-worker.js';
import type { Db } from '../src/platform/db/database.js';
import type { ReceiverStats } from './baselines/receiver.js';
import {
  alternate,
  CONNECTIONS,
  type Figure,
  load,
  median,
  ratioOf,
  type Sample,
  samplesTable,
} from './lib.js';
import { type Running, startBaseline, startService } from './processes.js';
import {
  type BenchStorage,
  groupedKey,
  openStorage,
  type Seller,
  type StorageKind,
  seedLicenses,
} from './storage.js';

/** Events per round (BENCH_DELIVERIES, default 5,000); the warm-up round sends a tenth. */
const DELIVERIES = Number(process.env.BENCH_DELIVERIES ?? 5000);
/** Events committed one at a time for the time from commit to first attempt, and how far apart. */
const LATENCY_EVENTS = 200;
const LATENCY_EVERY_MS = 25;

/**
 * P6: webhook deliveries a second to one receiver in its own process, beside the receiver's own
 * rate (autocannon straight at it: one POST at a time, as many in flight as the service sends to
 * one endpoint, and BENCH_CONNECTIONS), alternating. Each round commits DELIVERIES licenses with
 * their license.created events in one transaction (SQL), for an endpoint subscribed to them, and
 * times commit to the last receipt. The receiver speaks TLS: production only sends to https.
 * PGlite belongs to the service's process, so there the events are written while it is stopped
 * and the time runs from the moment it is up again.
 */
export async function webhookDelivery(kind: StorageKind): Promise<{ text: string; figures: Figure[] }> {
  const storage = await openStorage(kind, 'webhooks');
  const stops: (() => Promise<void>)[] = [];
  let node: (Running & { api: string }) | null = null;
  try {
    const key = path.join(storage.dir, 'tls-key.pem');
    const cert = path.join(storage.dir, 'tls-cert.pem');
    // A self-signed certificate for loopback, trusted by the service through NODE_EXTRA_CA_CERTS.
    const certificate =
      '-x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1';
    execFileSync('openssl', ['req', ...certificate.split(' '), '-keyout', key, '-out', cert], {
      stdio: 'ignore',
    });
    const receiver = await startBaseline('receiver', { TLS_KEY: key, TLS_CERT: cert }, storage.dir);
    stops.push(receiver.stop);
    const stats = () => receiverStats(receiver.url, fs.readFileSync(cert));
    const seller = await storage.write((db) => seedLicenses(db, 0));
    const env = { JOBS: 'on', WEBHOOK_ALLOW_PRIVATE: 'true', NODE_EXTRA_CA_CERTS: cert };
    if (kind === 'PostgreSQL') node = await startService(storage, env);

    let round = 0;
    const firstReceiptMs: number[] = [];
    // PGlite: each round's rate right after the service started (see below).
    const afterStart: Sample[] = [];
    const deliveries = async (_seconds: number, warmUp: boolean): Promise<Sample> => {
      const count = warmUp ? Math.ceil(DELIVERIES / 10) : DELIVERIES;
      const target = `/hooks/${++round}`;
      const commit = async (db: Db) => {
        await commitEvents(db, seller, `${receiver.url}${target}`, count, round);
        return Date.now();
      };
      if (kind === 'PGlite') {
        // PGlite belongs to the service's process, so the round is written while it is stopped.
        // Before it come as many events for another endpoint (of another type, so neither
        // endpoint gets the other's), sent first: what a node spends in its first seconds
        // (compiling its hot paths, on both cores) is then timed apart, not in this round's rate.
        const startTarget = `/start/${round}`;
        await node?.stop();
        await storage.write(async (db) => {
          await commitEvents(db, seller, `${receiver.url}${startTarget}`, count, `start-${round}`, {
            type: 'license.updated',
          });
          await commitEvents(db, seller, `${receiver.url}${target}`, count, round, { keepOthers: true });
        });
        node = await startService(storage, env);
        const started = await waitForCount(stats, startTarget, count);
        // The jobs start just before the service says it is up: a delivery may come first.
        const up = Math.min(node.readyAt, started.firstAt);
        if (!warmUp) {
          firstReceiptMs.push(started.firstAt - up);
          afterStart.push({ perSecond: Math.round(count / ((started.lastAt - up) / 1000)) });
        }
        const seen = await waitForCount(stats, target, count);
        return { perSecond: Math.round((count - 1) / ((seen.lastAt - seen.firstAt) / 1000)) };
      }
      const from = await storage.write(commit);
      const seen = await waitForCount(stats, target, count);
      if (!warmUp) firstReceiptMs.push(seen.firstAt - from);
      return { perSecond: Math.round(count / ((seen.lastAt - from) / 1000)) };
    };

    const bodies = path.join(storage.dir, 'delivery.jsonl');
    fs.writeFileSync(bodies, `${JSON.stringify(sampleEnvelope())}\n`);
    const deliveriesName = `deliveries to one endpoint (${DELIVERIES} events a round)`;
    // The receiver's own rate, three ways, from autocannon over TLS with keep-alive: one POST at
    // a time (the issue's baseline: "plain sequential POSTs"), as many in flight as the service
    // sends to one endpoint, and BENCH_CONNECTIONS (16).
    const straight = (connections: number) => (seconds: number) =>
      load(`${receiver.url}/baseline`, { bodies, seconds, connections });
    const baselineName = 'POSTs straight to the receiver, one at a time (baseline)';
    const inFlightName = `POSTs straight to the receiver, ${PER_ENDPOINT_CONCURRENCY} in flight`;
    const manyName = `POSTs straight to the receiver, ${CONNECTIONS} connections`;
    const samples = await alternate([
      { name: deliveriesName, run: deliveries },
      { name: baselineName, run: straight(1) },
      { name: inFlightName, run: straight(PER_ENDPOINT_CONCURRENCY) },
      { name: manyName, run: straight(CONNECTIONS) },
    ]);
    if (afterStart.length)
      samples.set(`the same right after a start (${DELIVERIES} for another endpoint)`, afterStart);
    const delivered = median((samples.get(deliveriesName) ?? []).map((s) => s.perSecond));
    // PGlite belongs to the service's process: nothing else can commit while it runs.
    const latency =
      kind === 'PostgreSQL' ? await commitToFirstAttempt(storage, seller, receiver.url, stats) : null;
    const since = kind === 'PGlite' ? 'the service being up' : 'commit';
    const timed =
      kind === 'PGlite'
        ? `Deliveries timed from the first receipt to the last, over TLS to a receiver on loopback. The service is started for each round (PGlite is written to while it is stopped), and as many events for another endpoint are sent first; those are timed from the service being up to their last receipt ("right after a start").`
        : 'Deliveries timed from commit to the last receipt, over TLS to a receiver on loopback.';
    const text = [
      `#### Webhook delivery (${kind})`,
      '',
      timed,
      '',
      samplesTable(samples, '/s'),
      '',
      `From ${since} to the first receipt: median ${median(firstReceiptMs)} ms (${Math.min(...firstReceiptMs)}–${Math.max(...firstReceiptMs)}).`,
      ...(latency
        ? [
            '',
            `From commit to the first attempt's arrival, ${LATENCY_EVENTS} events each committed alone, ${LATENCY_EVERY_MS} ms apart: ${percentiles(latency)}.`,
          ]
        : []),
    ].join('\n');
    return {
      text,
      figures: [
        {
          figure: 'P6',
          measure: 'webhook deliveries a second to one receiver / its own rate, one POST at a time',
          value: `${Math.round(delivered)}/s, ${ratioOf(samples, deliveriesName, baselineName)}`,
          goal: '≥ 1,000/s and ≥ 50 %',
        },
        {
          figure: '(P6)',
          measure: `the same / the receiver's rate at ${PER_ENDPOINT_CONCURRENCY} in flight; at ${CONNECTIONS} connections`,
          value: `${ratioOf(samples, deliveriesName, inFlightName)}; ${ratioOf(samples, deliveriesName, manyName)}`,
          goal: '',
        },
        ...(latency
          ? [
              {
                figure: 'P6',
                measure: `commit → first attempt, ${LATENCY_EVENTS} events committed one at a time`,
                value: percentiles(latency),
                goal: 'p99 ≤ 300 ms',
              },
            ]
          : []),
      ],
    };
  } finally {
    await node?.stop();
    for (const stop of stops.reverse()) await stop();
    await storage.drop();
  }
}

/**
 * In one transaction: a new endpoint for this round (the earlier ones disabled), subscribed to
 * license.created, and `count` licenses with their events, shaped as the license service writes
 * them (with the notification that wakes the delivery worker at commit).
 */
export async function commitEvents(
  db: Db,
  seller: Seller,
  url: string,
  count: number,
  label: string | number,
  options: { type?: string; keepOthers?: boolean } = {},
): Promise<void> {
  const type = options.type ?? 'license.created';
  await sql
    .raw(
      `${options.keepOthers ? '' : 'update webhook_endpoints set enabled = false;'} ${endpointSql(seller, url, type)} ${eventsSql(seller, count, `hooks-${label}`, type)}`,
    )
    .execute(db);
}

/** SQL: a new endpoint for `url` subscribed to events of `type`. */
function endpointSql(seller: Seller, url: string, type: string): string {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  return `
    insert into webhook_endpoints (id, user_id, app_id, url, events, secret, created_at, updated_at)
    values (gen_random_uuid(), '${seller.userId}', '${seller.appId}', '${url}', array['${type}'], '${secret}',
      now() - interval '1 second', now());`;
}

/**
 * SQL: `count` licenses with an event of `type` each (its id `eventId` when given, for one), and
 * the notification that wakes the delivery worker at commit.
 */
function eventsSql(seller: Seller, count: number, label: string, type: string, eventId?: string): string {
  return `
    with created as (
      insert into licenses (id, key, app_id, user_id)
      select gen_random_uuid(), ${groupedKey('h')}, '${seller.appId}', '${seller.userId}'
      from (select upper(md5('${label}-' || i)) as h from generate_series(1, ${count}) i) s
      returning id, key, user_id, status, created_at
    )
    insert into events (id, type, user_id, app_id, data, created_at)
    select ${eventId ? `'${eventId}'` : 'gen_random_uuid()'}, '${type}', user_id, '${seller.appId}',
      jsonb_build_object('id', id, 'licenseKey', key, 'userId', user_id, 'productId', null, 'status', status,
        'expiresAt', null, 'createdAt', to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')),
      now()
    from created;
    select pg_notify('events_recorded', '');`;
}

/**
 * The time from a commit to its first attempt's arrival (PostgreSQL): LATENCY_EVENTS events for a
 * new endpoint, each committed in a transaction of its own, LATENCY_EVERY_MS apart, as a busy
 * seller's licenses come. Returns each event's time in ms.
 */
async function commitToFirstAttempt(
  storage: BenchStorage,
  seller: Seller,
  receiverUrl: string,
  stats: () => Promise<ReceiverStats>,
): Promise<number[]> {
  const target = '/each/latency';
  const committed = new Map<string, number>();
  await storage.write(async (db) => {
    await sql
      .raw(
        `update webhook_endpoints set enabled = false; ${endpointSql(seller, `${receiverUrl}${target}`, 'license.created')}`,
      )
      .execute(db);
    for (let i = 0; i < LATENCY_EVENTS; i++) {
      const eventId = randomUUID();
      await sql.raw(eventsSql(seller, 1, `latency-${i}`, 'license.created', eventId)).execute(db);
      committed.set(eventId, Date.now());
      await new Promise((resolve) => setTimeout(resolve, LATENCY_EVERY_MS));
    }
  });
  const seen = await waitForCount(stats, target, LATENCY_EVENTS);
  return [...committed].map(([eventId, at]) => (seen.arrivals?.[eventId] ?? Number.NaN) - at);
}

export async function waitForCount(stats: () => Promise<ReceiverStats>, target: string, count: number) {
  let last = { count: -1, at: Date.now() };
  for (;;) {
    const seen = (await stats())[target];
    if (seen && seen.count >= count) return seen;
    const now = Date.now();
    if ((seen?.count ?? 0) !== last.count) last = { count: seen?.count ?? 0, at: now };
    else if (now - last.at > 30_000)
      throw new Error(`webhooks: ${last.count} of ${count} delivered, none for 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export function receiverStats(url: string, ca: Buffer): Promise<ReceiverStats> {
  return new Promise((resolve, reject) => {
    https
      .get(`${url}/stats`, { ca }, (res) => {
        let body = '';
        res.on('data', (chunk) => {
          body += chunk;
        });
        res.on('end', () => resolve(JSON.parse(body) as ReceiverStats));
      })
      .on('error', reject);
  });
}

/** p50, p99 and the longest of times in ms; an event that never arrived makes them all ∞. */
function percentiles(ms: number[]): string {
  const sorted = ms.map((v) => (Number.isFinite(v) ? v : Number.POSITIVE_INFINITY)).sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return `p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, longest ${sorted.at(-1)} ms`;
}

/** A delivery body of the size the service sends for license.created. */
function sampleEnvelope() {
  return {
    id: crypto.randomUUID(),
    type: 'license.created',
    data: {
      id: crypto.randomUUID(),
      licenseKey: 'ABCDE-12345-ABCDE-12345-ABCDE-12345',
      userId: crypto.randomUUID(),
      productId: null,
      status: 'active',
      expiresAt: null,
      createdAt: new Date().toISOString(),
    },
    timestamp: new Date().toISOString(),
    signature: `sha256=${randomBytes(32).toString('hex')}`,
  };
}
