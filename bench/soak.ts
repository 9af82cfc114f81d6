import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { parseConfig } from '../src/platform/config.js';
import type { BurstInput, BurstOutcome } from '../src/testing/burst-client.js';
import { killAll, serve } from '../src/testing/cli-process.js';
import { httpClient } from '../src/testing/http-client.js';
import { scratchDatabase } from '../src/testing/scratch-database.js';
import { inTurns, median, ROUNDS } from './lib.js';
import type { ProbeInput, ProbeResult } from './probe.js';
import { runJson } from './processes.js';

/**
 * Three runs against the service in its own process, as in production (the load generator is
 * this process, or one of its own):
 * - a verify soak over many licenses, with the node's resident memory sampled from /proc before,
 *   during and after: it must stay flat (no growth with requests served);
 * - bursts of 2,000 connections at once for 10 s (`autocannon -c 2000 -d 10`, its 10 s timeout),
 *   on a node with the default listen backlog and on one with Node's own 511, in turns (A B, B A,
 *   … BENCH_ROUNDS each), while two probe processes GET /healthz every 100 ms on a fresh
 *   connection, one on the core API's listener, one on the probe listener (HEALTH_PORT, a thread
 *   of its own). Counted: how the burst was answered, its timeouts and connection errors, the
 *   kernel's listen overflows (TcpExt ListenOverflows, machine-wide) and each probe's times;
 * - sudden bursts on the same two nodes: 2,000 clients opening their connections at once with one
 *   request each (src/testing/burst-client.ts), counting how many waited over a second, with
 *   the probe listener probed as above.
 * SOAK_SECONDS sets the soak's length (default 60).
 */
const BURST_CONNECTIONS = 2000;
const BURST_SECONDS = 10;
const SUDDEN_PROBE_EVERY = 50;
/** Node's own listen backlog, what the listeners took before LISTEN_BACKLOG. */
const NODE_DEFAULT_BACKLOG = '511';

export async function soak(): Promise<string> {
  const seconds = Number(process.env.SOAK_SECONDS ?? 60);
  const nodes: Node[] = [];
  try {
    const current = await startNode(nodes, {});
    const old = await startNode(nodes, { LISTEN_BACKLOG: NODE_DEFAULT_BACKLOG });

    // Warm up (JIT, the key set, devices bound), then measure memory over the soak.
    await verify(current, 20, 5);
    await verify(old, 20, 5);
    const samples: number[] = [rssMb(current.pid)];
    const sampler = setInterval(
      () => samples.push(rssMb(current.pid)),
      Math.max(1000, (seconds * 1000) / 10),
    );
    const soaked = await verify(current, 20, seconds);
    clearInterval(sampler);
    samples.push(rssMb(current.pid));

    const subjects = [
      { name: `default (${current.backlog})`, node: current },
      { name: `Node's ${NODE_DEFAULT_BACKLOG}`, node: old },
    ];
    const bursts = new Map(subjects.map((s) => [s.name, [] as Burst[]]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const subject of inTurns(subjects, round)) {
        console.error(`bench: soak: burst on ${subject.name}, round ${round + 1}`);
        bursts.get(subject.name)?.push(await burst(subject.node));
      }
    }
    // The same nodes met by 2,000 clients arriving at once with one request each.
    const sudden = new Map(subjects.map((s) => [s.name, [] as { outcome: BurstOutcome; probes: Probes }[]]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const subject of inTurns(subjects, round)) {
        console.error(`bench: soak: sudden burst on ${subject.name}, round ${round + 1}`);
        const { result, probes } = await whileProbed({ probeListener: subject.node.serving.health }, () =>
          runJson<BurstOutcome>('src/testing/burst-client.ts', {
            origin: subject.node.serving.api,
            connections: BURST_CONNECTIONS,
            probeEvery: SUDDEN_PROBE_EVERY,
            timeoutMs: 10_000,
          } satisfies BurstInput),
        );
        sudden.get(subject.name)?.push({ outcome: result, probes: probes.probeListener });
        await sleep(3000);
      }
    }
    const alive = nodes.every((node) => node.serving.proc.child.exitCode === null);

    const [first, ...rest] = samples;
    const last = rest.at(-1) ?? first;
    const storage = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';
    return [
      `### Soak and bursts (${storage}, service in its own process)`,
      '',
      `Verify soak: ${seconds} s at 20 connections over ${current.keys.length} licenses, ${soaked.requests.total} requests, ${Math.round(soaked.requests.average)}/s, errors ${soaked.errors + soaked.non2xx}.`,
      '',
      '| resident memory (MB) | before | max during | after | change |',
      '|---|---:|---:|---:|---:|',
      `| node | ${first} | ${Math.max(...samples)} | ${last} | ${((((last ?? 0) - (first ?? 0)) / (first || 1)) * 100).toFixed(1)} % |`,
      '',
      `Bursts: ${BURST_CONNECTIONS} connections for ${BURST_SECONDS} s (10 s timeout), ${ROUNDS} a backlog in turns; net.core.somaxconn ${readProc('/proc/sys/net/core/somaxconn')}, tcp_max_syn_backlog ${readProc('/proc/sys/net/ipv4/tcp_max_syn_backlog')}. Median a burst (min–max); nodes alive after: ${alive ? 'yes' : 'no'}.`,
      '',
      '| listen backlog | answered | 200 | 503 overloaded | other answers | timeouts | connection errors | listen overflows |',
      '|---|---:|---:|---:|---:|---:|---:|---:|',
      ...[...bursts].map(([name, runs]) =>
        row([
          name,
          cell(runs, (b) => b.answered),
          cell(runs, (b) => b.ok),
          cell(runs, (b) => b.overloaded),
          cell(runs, (b) => b.answered - b.ok - b.overloaded),
          cell(runs, (b) => b.timeouts),
          cell(runs, (b) => b.connectionErrors),
          cell(runs, (b) => b.listenOverflows),
        ]),
      ),
      '',
      `Probes during those bursts: \`GET /healthz\` every 100 ms, each on a fresh connection, ${PROBE_TIMEOUT_MS / 1000} s timeout, on the core API's listener and on the probe listener (\`HEALTH_PORT\`, its own thread). Median a burst (min–max) of the probes' median and slowest answer; a probe not answered counts at its timeout.`,
      '',
      PROBE_HEADER,
      PROBE_RULE,
      ...[...bursts].flatMap(([name, runs]) => [
        probeRow(
          `${name}, core API listener`,
          runs.map((b) => b.probes.coreListener),
        ),
        probeRow(
          `${name}, probe listener`,
          runs.map((b) => b.probes.probeListener),
        ),
      ]),
      '',
      `Sudden bursts: ${BURST_CONNECTIONS} clients opening their connections at once, one request each (a verify, or \`/healthz\` every ${SUDDEN_PROBE_EVERY}th), 10 s timeout, ${ROUNDS} a backlog in turns. Median a burst (min–max).`,
      '',
      '| listen backlog | answered | 200 | 503 overloaded | answered after more than 1 s | slowest answer ms | probes 200 | timeouts | connection failures |',
      '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
      ...[...sudden].map(([name, runs]) =>
        row([
          name,
          cell(runs, ({ outcome: b }) => Object.values(b.answers).reduce((n, c) => n + c, 0)),
          cell(runs, ({ outcome: b }) => b.answers['verify 200'] ?? 0),
          cell(runs, ({ outcome: b }) => b.answers['verify 503 overloaded'] ?? 0),
          cell(runs, ({ outcome: b }) => b.slowerThanOneSecond),
          cell(runs, ({ outcome: b }) => b.slowestMs),
          cell(runs, ({ outcome: b }) => b.answers['probe 200'] ?? 0),
          cell(runs, ({ outcome: b }) => b.timeouts),
          cell(runs, ({ outcome: b }) => b.connectFailures + b.otherFailures),
        ]),
      ),
      '',
      `Probes on the probe listener during the sudden bursts, as above (those on the core API's listener are the burst's own, every ${SUDDEN_PROBE_EVERY}th client).`,
      '',
      PROBE_HEADER,
      PROBE_RULE,
      ...[...sudden].map(([name, runs]) =>
        probeRow(
          `${name}, probe listener`,
          runs.map((b) => b.probes),
        ),
      ),
    ].join('\n');
  } finally {
    for (const node of nodes) {
      node.serving.proc.child.kill('SIGTERM');
      await node.serving.proc.exited;
      await node.scratch.drop();
      fs.rmSync(node.dataDir, { recursive: true, force: true });
    }
    killAll();
  }
}

interface Node {
  serving: Awaited<ReturnType<typeof serve>>;
  pid: number;
  keys: string[];
  backlog: string;
  scratch: Awaited<ReturnType<typeof scratchDatabase>>;
  dataDir: string;
}

/**
 * A node with production settings (load shedding on) and 500 licenses to verify, added to
 * `nodes` (stopped by the caller) as soon as it runs.
 */
async function startNode(nodes: Node[], env: { LISTEN_BACKLOG?: string }): Promise<Node> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-soak-'));
  // On PostgreSQL a database of its own, dropped afterwards (nothing left in the named one).
  const scratch = await scratchDatabase();
  const serving = await serve({
    NODE_ENV: 'production',
    DATA_DIR: dataDir,
    DATABASE_URL: scratch.url,
    JWT_SECRET: 'soak-benchmark-secret-of-at-least-32-characters',
    IDEMPOTENCY_SECRET: 'soak-idempotency-secret-of-at-least-32-characters',
    LOG_LEVEL: 'warn',
    PASSWORD_HASH_COST: '1024',
    VERIFY_RATE_LIMIT: '1000000',
    VERIFY_KEY_RATE_LIMIT: '1000000',
    AUTH_RATE_LIMIT: '100000',
    // Load shedding as in production (the test helpers turn it off).
    MAX_EVENT_LOOP_DELAY: '1000',
    // Two nodes at once: each scrapes and is probed on ports of its own.
    METRICS_PORT: '0',
    HEALTH_PORT: '0',
    ...env,
  }).catch(async (error) => {
    await scratch.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw error;
  });
  const node: Node = {
    serving,
    pid: serving.proc.child.pid as number,
    keys: [],
    backlog: env.LISTEN_BACKLOG ?? String(parseConfig({}).listenBacklog),
    scratch,
    dataDir,
  };
  nodes.push(node);
  const api = httpClient(`${serving.api}/v1`);
  const { token } = (
    await api.post('/auth/register', { email: `soak-${Date.now()}@example.com`, password: 'soak password' })
  ).expect(201).body;
  const appId = (await api.post('/apps', { name: 'Soak' }, { token })).expect(201).body.id;
  for (let i = 0; i < 500; i++) {
    node.keys.push(
      (
        await api.post(
          `/apps/${appId}/licenses`,
          { email: `buyer${i}@example.com`, maxDevices: 5 },
          { token },
        )
      ).expect(201).body.key,
    );
  }
  return node;
}

function verify(node: Node, connections: number, duration: number) {
  let next = 0;
  return autocannon({
    url: `${node.serving.api}/v1/licenses/verify`,
    connections,
    duration,
    requests: [
      {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        setupRequest: (request) => {
          next = (next + 1) % (node.keys.length * 3);
          const key = node.keys[next % node.keys.length];
          return { ...request, body: JSON.stringify({ key, hwuid: `device-${next % 3}` }) };
        },
      },
    ],
  });
}

interface Burst {
  answered: number;
  ok: number;
  overloaded: number;
  timeouts: number;
  /** Refused or reset connections (autocannon's errors that are not timeouts). */
  connectionErrors: number;
  listenOverflows: number;
  probes: Record<'coreListener' | 'probeListener', Probes>;
}

async function burst(node: Node): Promise<Burst> {
  const overflowsBefore = listenOverflows();
  const { result, probes } = await whileProbed(
    { coreListener: node.serving.api, probeListener: node.serving.health },
    () => verify(node, BURST_CONNECTIONS, BURST_SECONDS),
  );
  const overflows = listenOverflows() - overflowsBefore;
  // The node winds down what the burst left (closed connections, queued requests) before the next.
  await sleep(3000);
  const answered = Object.values(result.statusCodeStats ?? {}).reduce((n, s) => n + (s?.count ?? 0), 0);
  return {
    answered,
    ok: result.statusCodeStats?.['200']?.count ?? 0,
    overloaded: result.statusCodeStats?.['503']?.count ?? 0,
    timeouts: result.timeouts,
    connectionErrors: result.errors - result.timeouts,
    listenOverflows: overflows,
    probes,
  };
}

const PROBE_TIMEOUT_MS = 10_000;
const PROBE_HEADER = '| probed | probes | not 200 | median ms | slowest ms |';
const PROBE_RULE = '|---|---:|---:|---:|---:|';

/** How the probes sent during a burst were answered. */
interface Probes {
  count: number;
  /** Answered otherwise, or not at all. */
  not200: number;
  medianMs: number | null;
  slowestMs: number | null;
}

/**
 * Runs `burst` while a probe process (bench/probe.ts) GETs `/healthz` every 100 ms at each of
 * `origins` (null: not probed); counts only the probes sent while the burst ran.
 */
async function whileProbed<T, K extends string>(
  origins: Record<K, string | null>,
  burst: () => Promise<T>,
): Promise<{ result: T; probes: Record<K, Probes> }> {
  const probing = Object.entries<string | null>(origins).map(([name, origin]) => ({
    name: name as K,
    run: origin
      ? runJson<ProbeResult>('bench/probe.ts', {
          url: `${origin}/healthz`,
          seconds: BURST_SECONDS + 6,
          everyMs: 100,
          timeoutMs: PROBE_TIMEOUT_MS,
        } satisfies ProbeInput)
      : Promise.resolve({ probes: [] }),
  }));
  // The probe processes start (tsx) before the burst.
  await sleep(3000);
  const from = Date.now();
  const result = await burst();
  const to = Date.now();
  const probes = {} as Record<K, Probes>;
  for (const { name, run } of probing) {
    const sent = (await run).probes.filter((p) => p.at >= from && p.at <= to);
    // A probe with no answer (refused, reset, timed out) counts at its timeout, as a balancer's.
    const times = sent.map((p) => (p.status === 0 ? Math.max(p.ms, PROBE_TIMEOUT_MS) : p.ms));
    probes[name] = {
      count: sent.length,
      not200: sent.filter((p) => p.status !== 200).length,
      medianMs: times.length ? median(times) : null,
      slowestMs: times.length ? Math.max(...times) : null,
    };
  }
  return { result, probes };
}

function probeRow(name: string, runs: Probes[]): string {
  return row([
    name,
    cell(runs, (p) => p.count),
    cell(runs, (p) => p.not200),
    cell(runs, (p) => p.medianMs),
    cell(runs, (p) => p.slowestMs),
  ]);
}

function row(cells: string[]): string {
  return `| ${cells.join(' | ')} |`;
}

/** A figure over the runs: its median, and its range when they differ (`12 (9–15)`); – for none. */
function cell<T>(runs: T[], pick: (run: T) => number | null): string {
  const values = runs.map(pick).filter((v) => v !== null);
  if (values.length === 0) return '–';
  const [low, high] = [Math.min(...values), Math.max(...values)];
  const mid = Math.round(median(values));
  return low === high ? String(mid) : `${mid} (${Math.round(low)}–${Math.round(high)})`;
}

/** The kernel's count of connections dropped because a listen queue was full (all listeners). */
function listenOverflows(): number {
  const lines = fs.readFileSync('/proc/net/netstat', 'utf8').split('\n');
  const [names, values] = lines.filter((line) => line.startsWith('TcpExt:')).map((l) => l.split(/\s+/));
  const at = names?.indexOf('ListenOverflows') ?? -1;
  return at < 0 ? 0 : Number(values?.[at] ?? 0);
}

function readProc(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return 'unknown';
  }
}

/** Resident set size of a process, in MB, from /proc (Linux). */
function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}
