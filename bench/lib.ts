import autocannon from 'autocannon';
import type { LoadInput, LoadResult } from './load.js';
import { runJson } from './processes.js';
import type { StorageKind } from './storage.js';

/**
 * Settings that make a test server measure like a production node: quiet logs and no response
 * contract check (tests enforce it; production leaves it off).
 */
export const AS_IN_PRODUCTION = { LOG_LEVEL: 'warn', RESPONSE_CONTRACT: 'off' } as const;

/** One measured scenario: requests per second and latency, from a fixed-duration autocannon run. */
export interface Measurement {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

export async function measure(
  name: string,
  request: { url: string; method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string },
  options: { seconds?: number; connections?: number } = {},
): Promise<Measurement> {
  const result = await autocannon({
    url: request.url,
    method: request.method ?? 'GET',
    headers: request.headers,
    body: request.body,
    connections: options.connections ?? 10,
    duration: options.seconds ?? Number(process.env.BENCH_SECONDS ?? 3),
  });
  const errors = result.errors + result.non2xx;
  return {
    name,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors,
  };
}

/** A markdown table with each scenario's throughput as a ratio of the first (the baseline). */
export function report(title: string, rows: Measurement[]): string {
  const baseline = rows[0]?.requestsPerSecond || 1;
  const lines = [
    `### ${title}`,
    '',
    '| scenario | req/s | ratio to baseline | p50 ms | p99 ms | errors |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (row) =>
        `| ${row.name} | ${row.requestsPerSecond} | ${(row.requestsPerSecond / baseline).toFixed(2)} | ${row.p50Ms} | ${row.p99Ms} | ${row.errors} |`,
    ),
  ];
  return lines.join('\n');
}

/** How long each measurement lasts (BENCH_SECONDS, default 10) and how many rounds (BENCH_ROUNDS, ≥ 3). */
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
export const ROUNDS = Math.max(3, Number(process.env.BENCH_ROUNDS ?? 3));
/** Requests in flight from the load generator (BENCH_CONNECTIONS, default 16). */
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 16);

/** One figure of one run: a rate (a second), with latency when it is a load test. */
export interface Sample {
  perSecond: number;
  p50Ms?: number;
  p99Ms?: number;
  errors?: number;
  /** Requests answered in all, when the generator counts them. */
  requests?: number;
  /** CPU the measuring process spent a request (every thread, µs): the load generator's, or a baseline's own. */
  cpuUsPerRequest?: number;
}

export interface Scenario {
  name: string;
  /** One measurement; the warm-up's is discarded. */
  run(seconds: number, warmUp: boolean): Promise<Sample>;
}

/**
 * Runs every scenario once to warm it up (JIT, caches, connections), then `ROUNDS` rounds of all
 * of them in turn (A B A B …), so a subject and its baseline see the same moments of a noisy
 * machine. Every other round runs them in reverse order (A B C, C B A, A B C): a scenario that
 * always ran right after the same one (after raw signing had every core busy for SECONDS, say)
 * or always earlier in a round, while the machine slows or recovers, would carry that place in
 * its figure. Returns each scenario's samples, in order.
 */
export async function alternate(scenarios: Scenario[]): Promise<Map<string, Sample[]>> {
  const samples = new Map(scenarios.map((s) => [s.name, [] as Sample[]]));
  for (const scenario of scenarios) await scenario.run(Math.min(3, SECONDS), true);
  for (let round = 0; round < ROUNDS; round++) {
    for (const scenario of inTurns(scenarios, round))
      samples.get(scenario.name)?.push(await scenario.run(SECONDS, false));
  }
  return samples;
}

/** The order of round `round` of `items`: as given, then reversed, in turns (see alternate). */
export function inTurns<T>(items: readonly T[], round: number): readonly T[] {
  return round % 2 === 0 ? items : [...items].reverse();
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

/** A markdown table of each scenario's median, spread (min–max), median latencies and errors. */
export function samplesTable(samples: Map<string, Sample[]>, unit = 'req/s'): string {
  const lines = [
    `| scenario | median ${unit} | spread (min–max) | p50 ms | p99 ms | errors |`,
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const [name, runs] of samples) {
    const rates = runs.map((r) => r.perSecond);
    const latency = (pick: (s: Sample) => number | undefined) => {
      const values = runs.map(pick).filter((v): v is number => v !== undefined);
      return values.length ? String(median(values)) : '';
    };
    const errors = runs.some((r) => r.errors !== undefined)
      ? String(runs.reduce((n, r) => n + (r.errors ?? 0), 0))
      : '';
    lines.push(
      `| ${name} | ${Math.round(median(rates))} | ${Math.min(...rates)}–${Math.max(...rates)} | ${latency((s) => s.p50Ms)} | ${latency((s) => s.p99Ms)} | ${errors} |`,
    );
  }
  return lines.join('\n');
}

/** One line of the figures table: a subject's median over its baseline's, against the goal. */
export interface Figure {
  figure: string;
  measure: string;
  value: string;
  goal: string;
}

export function ratioOf(samples: Map<string, Sample[]>, subject: string, baseline: string): string {
  const of = (name: string) => median((samples.get(name) ?? []).map((s) => s.perSecond));
  return `${Math.round((of(subject) / (of(baseline) || 1)) * 100)} %`;
}

export function figuresTable(figures: Figure[]): string {
  return [
    '| figure | measure | value | goal |',
    '|---|---|---:|---:|',
    ...figures.map((f) => `| ${f.figure} | ${f.measure} | ${f.value} | ${f.goal} |`),
  ].join('\n');
}

/**
 * Drives `url` from a load-generator process and returns what it measured: as many requests as
 * are answered (bench/load.ts, autocannon), or, with `overallRate`, evenly paced open-loop
 * requests at that rate (bench/paced.ts).
 */
export async function load(
  url: string,
  options: Omit<LoadInput, 'url' | 'connections'> & { connections?: number },
): Promise<Sample> {
  const generator = options.overallRate ? 'bench/paced.ts' : 'bench/load.ts';
  const result = await runJson<LoadResult>(generator, { url, connections: CONNECTIONS, ...options });
  return {
    perSecond: result.requestsPerSecond,
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    errors: result.errors,
    ...(result.requests !== undefined ? { requests: result.requests } : {}),
    ...(result.cpuUsPerRequest !== undefined ? { cpuUsPerRequest: result.cpuUsPerRequest } : {}),
  };
}

/** The storages to bench on: BENCH_STORAGE (pglite, postgresql, both) or `--both`; else by DATABASE_URL. */
export function storages(argv: string[]): StorageKind[] {
  const chosen = argv.includes('--both') ? 'both' : (process.env.BENCH_STORAGE ?? '').toLowerCase();
  if (chosen === 'both') return ['PGlite', 'PostgreSQL'];
  if (chosen === 'pglite') return ['PGlite'];
  if (chosen === 'postgresql' || process.env.DATABASE_URL) return ['PostgreSQL'];
  return ['PGlite'];
}
