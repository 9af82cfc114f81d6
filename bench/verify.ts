import { cpuMs } from './cpu-profile.js';
import {
  alternate,
  CONNECTIONS,
  type Figure,
  load,
  median,
  ROUNDS,
  ratioOf,
  type Sample,
  SECONDS,
  samplesTable,
} from './lib.js';
import { runJson, startBaseline, startService } from './processes.js';
import {
  benchDevice,
  benchKey,
  openStorage,
  type StorageKind,
  seedLicenses,
  writeBodies,
} from './storage.js';

const RAW_SIGNING = 'raw RS256 signing, jose (baseline of P1)';
const SIGNING_ROUTE = 'bare Fastify route that signs (what P1 can reach here)';
const ED25519 = 'verify with an Ed25519 token';

/** Licenses seeded, and rotated over round-robin by the load generator (BENCH_LICENSES, ≥ 2,000). */
const LICENSES = Math.max(2000, Number(process.env.BENCH_LICENSES ?? 10_000));

/**
 * P1–P4: the verify route of the service in its own process, driven from another, beside its
 * baselines in their own processes, alternating round by round:
 * - P1 verify with a token / raw RS256 signing with jose at the same concurrency, with a bare
 *   Fastify route that signs as the service does beside them: what any route that answers with a
 *   token reaches on this machine and generator;
 * - P2 (PostgreSQL) and P3 (PGlite) verify with LICENSE_TOKENS=off / a bare Fastify POST route,
 *   with one indexed SELECT through `pg` beside it (PostgreSQL) to show what the database costs;
 * - P4 p99 at half of P1's median rate, evenly paced (bench/paced.ts), beside the bare route and
 *   the bare route that signs at the same rate, with the services and baselines only the other
 *   figures need stopped.
 * - (metrics) and (timeline): verify with LICENSE_TOKENS=off beside the same with METRICS=off, and
 *   with LICENSE_TIMELINE_CALLS=off: what recording metrics, and each verify's timeline entry, cost.
 * Each request verifies the next of LICENSES licenses with its bound device ({key, hwuid}), as
 * installed clients do; a single-key row is reported beside them, and the same verify with an
 * Ed25519 token (the app's tokenAlgorithm EdDSA, a service and database of its own), beside P1.
 */
export async function verifyPath(kind: StorageKind): Promise<{ text: string; figures: Figure[] }> {
  const withTokens = await openStorage(kind, 'verify-tokens');
  const withoutTokens = await openStorage(kind, 'verify-off');
  const withoutMetrics = await openStorage(kind, 'verify-off-no-metrics');
  const withoutTimeline = await openStorage(kind, 'verify-off-no-timeline');
  const withEd25519 = await openStorage(kind, 'verify-ed25519');
  const stops: (() => Promise<void>)[] = [];
  try {
    await withTokens.write((db) => seedLicenses(db, LICENSES));
    await withoutTokens.write((db) => seedLicenses(db, LICENSES));
    await withoutMetrics.write((db) => seedLicenses(db, LICENSES));
    await withoutTimeline.write((db) => seedLicenses(db, LICENSES));
    await withEd25519.write(async (db) => {
      const { appId } = await seedLicenses(db, LICENSES);
      await db.updateTable('apps').set({ token_algorithm: 'EdDSA' }).where('id', '=', appId).execute();
    });
    const bodies = writeBodies(withTokens, 'bodies.jsonl', LICENSES);
    const oneKey = writeBodies(withTokens, 'one-key.jsonl', 1);

    const tokens = await startService(withTokens, {});
    stops.push(tokens.stop);
    const ed25519 = await startService(withEd25519, {});
    stops.push(ed25519.stop);
    const off = await startService(withoutTokens, { LICENSE_TOKENS: 'off' });
    stops.push(off.stop);
    // What recording metrics costs, on the path where it weighs most (no signing).
    const offNoMetrics = await startService(withoutMetrics, { LICENSE_TOKENS: 'off', METRICS: 'off' });
    stops.push(offNoMetrics.stop);
    // What the licenses' timelines cost: each verify an entry, written in batches off the request.
    const offNoTimeline = await startService(withoutTimeline, {
      LICENSE_TOKENS: 'off',
      LICENSE_TIMELINE_CALLS: 'off',
    });
    stops.push(offNoTimeline.stop);
    const bare = await startBaseline('bare', {}, withTokens.dir);
    stops.push(bare.stop);
    const signingRoute = await startBaseline('bare-signing', {}, withTokens.dir);
    stops.push(signingRoute.stop);
    const select =
      kind === 'PostgreSQL'
        ? await startBaseline(
            'select',
            { DATABASE_URL: withoutTokens.env.DATABASE_URL as string },
            withoutTokens.dir,
          )
        : null;
    if (select) stops.push(select.stop);

    await expectValid(`${tokens.api}/licenses/verify`, 'RS256');
    await expectValid(`${ed25519.api}/licenses/verify`, 'EdDSA');
    await expectValid(`${off.api}/licenses/verify`, null);

    const verifyUrl = (api: string) => `${api}/licenses/verify`;
    /** The service's CPU a verify with a token (µs), every thread and its main thread, each round. */
    const serviceCpu: { all: number; main: number }[] = [];
    const scenarios = [
      {
        name: 'verify with a token',
        run: async (seconds: number, warmUp: boolean) => {
          const before = { all: cpuMs(tokens.pid), main: cpuMs(tokens.pid, tokens.pid) };
          const sample = await load(verifyUrl(tokens.api), { bodies, seconds });
          // The count the generator divides its own CPU by, so both are per the same requests.
          const requests = Math.max(1, sample.requests ?? sample.perSecond * seconds);
          if (!warmUp) {
            serviceCpu.push({
              all: ((cpuMs(tokens.pid) - before.all) * 1000) / requests,
              // The main thread's id is the process id.
              main: ((cpuMs(tokens.pid, tokens.pid) - before.main) * 1000) / requests,
            });
          }
          return sample;
        },
      },
      {
        name: ED25519,
        run: (seconds: number) => load(verifyUrl(ed25519.api), { bodies, seconds }),
      },
      {
        name: RAW_SIGNING,
        run: async (seconds: number) =>
          runJson<Sample>('bench/baselines/signing.ts', {
            seconds,
            concurrency: CONNECTIONS,
          }),
      },
      {
        name: SIGNING_ROUTE,
        run: (seconds: number) => load(signingRoute.url, { bodies, seconds }),
      },
      {
        name: 'verify, LICENSE_TOKENS=off',
        run: (seconds: number) => load(verifyUrl(off.api), { bodies, seconds }),
      },
      {
        name: 'verify, LICENSE_TOKENS=off, METRICS=off',
        run: (seconds: number) => load(verifyUrl(offNoMetrics.api), { bodies, seconds }),
      },
      {
        name: 'verify, LICENSE_TOKENS=off, LICENSE_TIMELINE_CALLS=off',
        run: (seconds: number) => load(verifyUrl(offNoTimeline.api), { bodies, seconds }),
      },
      {
        name: 'bare Fastify POST route (baseline of P2/P3)',
        run: (seconds: number) => load(bare.url, { bodies, seconds }),
      },
      ...(select
        ? [
            {
              name: 'one indexed SELECT through pg',
              run: (seconds: number) => load(select.url, { bodies, seconds }),
            },
          ]
        : []),
      {
        name: 'verify with a token, one key',
        run: (seconds: number) => load(verifyUrl(tokens.api), { bodies: oneKey, seconds }),
      },
    ];
    const samples = await alternate(scenarios);

    // P4 needs only the service with tokens and the bare route. The others would sit idle beside
    // them on the same two cores, but not quiet: for ten minutes after their last load each keeps
    // its 10,000 cache entries warm, and collects its heap now and then (one's three mark-compacts
    // of 14-27 ms began P4's slowest stretch in one run, seen with `perf sched`). A
    // node in production does not have two idle twins beside it.
    await off.stop();
    await offNoMetrics.stop();
    await offNoTimeline.stop();
    await ed25519.stop();
    await select?.stop();

    // P4: a fixed rate, half of the median maximum with tokens.
    const rate = Math.round(median((samples.get('verify with a token') ?? []).map((s) => s.perSecond)) / 2);
    // Beside it, alternating, the bare route at the same rate (what the generator's pacing and
    // the machine add to a route that does nothing) and the bare route that signs (what they add
    // to one that answers with a token).
    const atHalf: Sample[] = [];
    const bareAtHalf: Sample[] = [];
    const signingAtHalf: Sample[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      atHalf.push(await load(verifyUrl(tokens.api), { bodies, seconds: SECONDS, overallRate: rate }));
      bareAtHalf.push(await load(bare.url, { bodies, seconds: SECONDS, overallRate: rate }));
      signingAtHalf.push(await load(signingRoute.url, { bodies, seconds: SECONDS, overallRate: rate }));
    }
    samples.set(`verify with a token at ${rate}/s (half of the median)`, atHalf);
    samples.set(`bare Fastify POST route at ${rate}/s (floor of P4)`, bareAtHalf);
    samples.set(`bare Fastify route that signs at ${rate}/s (floor of P4 with a token)`, signingAtHalf);

    /** p99 over a scenario's rounds: median and spread. */
    const p99Spread = (rounds: Sample[]) => {
      const p99s = rounds.map((s) => s.p99Ms ?? 0);
      return `${median(p99s)} ms (${Math.min(...p99s)}–${Math.max(...p99s)})`;
    };
    // The paced generator's own CPU a request: on two shared cores, not left to the service.
    const pacing = reportedCpu(atHalf);
    const figures: Figure[] = [
      {
        figure: 'P1',
        measure: 'verify with a token / raw RS256 signing',
        value: ratioOf(samples, 'verify with a token', RAW_SIGNING),
        goal: '≥ 80 %',
      },
      p1Budget(samples, serviceCpu),
      {
        figure: '(P1)',
        measure: 'bare route that signs / raw RS256 signing: the most a route with a token reaches here',
        value: ratioOf(samples, SIGNING_ROUTE, RAW_SIGNING),
        goal: '',
      },
      {
        figure: '(P1)',
        measure: 'verify with a token / bare route that signs',
        value: ratioOf(samples, 'verify with a token', SIGNING_ROUTE),
        goal: '',
      },
      {
        figure: '(P1)',
        measure: 'verify with an Ed25519 token / verify with a token (RS256)',
        value: ratioOf(samples, ED25519, 'verify with a token'),
        goal: '',
      },
      {
        figure: kind === 'PostgreSQL' ? 'P2' : 'P3',
        measure: 'verify, LICENSE_TOKENS=off / bare Fastify',
        value: ratioOf(samples, 'verify, LICENSE_TOKENS=off', 'bare Fastify POST route (baseline of P2/P3)'),
        goal: kind === 'PostgreSQL' ? '≥ 50 %' : '≥ 30 %',
      },
      ...(select
        ? [
            {
              figure: '(P2)',
              measure: 'one indexed SELECT through pg / bare Fastify',
              value: ratioOf(
                samples,
                'one indexed SELECT through pg',
                'bare Fastify POST route (baseline of P2/P3)',
              ),
              goal: '',
            },
          ]
        : []),
      {
        figure: '(metrics)',
        measure: 'verify, tokens off, metrics on / METRICS=off',
        value: ratioOf(samples, 'verify, LICENSE_TOKENS=off', 'verify, LICENSE_TOKENS=off, METRICS=off'),
        goal: '≥ 95 %',
      },
      {
        figure: '(timeline)',
        measure: 'verify, tokens off, timeline on / LICENSE_TIMELINE_CALLS=off',
        value: ratioOf(
          samples,
          'verify, LICENSE_TOKENS=off',
          'verify, LICENSE_TOKENS=off, LICENSE_TIMELINE_CALLS=off',
        ),
        goal: '≥ 95 %',
      },
      {
        figure: 'P4',
        measure: `p99 at ${rate}/s with a token (median, spread)`,
        value: `${p99Spread(atHalf)}; at that rate the bare route ${p99Spread(bareAtHalf)}, the bare route that signs ${p99Spread(signingAtHalf)}${Number.isFinite(pacing) ? `; generator ${pacing} µs a request` : ''}`,
        goal: '≤ 5 ms',
      },
    ];
    const text = [
      `#### Verify path (${kind})`,
      '',
      `${LICENSES.toLocaleString('en')} licenses, each request the next one round-robin with its bound device; ${ROUNDS} rounds of ${SECONDS} s, alternating.`,
      '',
      samplesTable(samples),
    ].join('\n');
    return { text, figures };
  } finally {
    for (const stop of stops.reverse()) await stop();
    await withTokens.drop();
    await withoutTokens.drop();
    await withoutMetrics.drop();
    await withoutTimeline.drop();
    await withEd25519.drop();
  }
}

/**
 * Where P1's cores go, per verify with a token: the signature (the baseline's own CPU a signature),
 * the rest of the service, and the load generator. The generator shares the machine's cores with
 * the service but not with the baseline, which only signs; so even a service that spent nothing
 * but the signature would reach only signature / (signature + generator) of the baseline's rate.
 * That ceiling is reported beside P1, not folded into it.
 */
function p1Budget(samples: Map<string, Sample[]>, serviceCpu: { all: number; main: number }[]): Figure {
  const cpuOf = (name: string) => reportedCpu(samples.get(name) ?? []);
  const signature = cpuOf(RAW_SIGNING);
  const generator = cpuOf('verify with a token');
  const service = Math.round(median(serviceCpu.map((c) => c.all)));
  const main = Math.round(median(serviceCpu.map((c) => c.main)));
  if (!serviceCpu.length || !Number.isFinite(signature) || !Number.isFinite(generator)) {
    return { figure: '(P1)', measure: 'CPU a verify with a token', value: 'not measured', goal: '' };
  }
  return {
    figure: '(P1)',
    measure:
      'CPU a verify with a token: the service (its main thread), the generator; a raw signature; P1 with nothing but the signature and this generator',
    value: `service ${service} µs (main ${main}), generator ${generator} µs; signature ${signature} µs; ceiling ${Math.round((signature / (signature + generator || 1)) * 100)} %`,
    goal: '',
  };
}

/** The median of what the samples' own processes reported spending a request (µs); NaN if none did. */
function reportedCpu(samples: Sample[]): number {
  return median(samples.flatMap((s) => (s.cpuUsPerRequest === undefined ? [] : [s.cpuUsPerRequest])));
}

/**
 * One request first: the keys must verify (valid, the device bound, a token signed with `alg`
 * when tokens are on, none when null).
 */
async function expectValid(url: string, alg: 'RS256' | 'EdDSA' | null): Promise<void> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ key: benchKey(1), hwuid: benchDevice(1) }),
  });
  const body = (await res.json()) as { valid?: boolean; hw_bound?: boolean; license_token?: string };
  const header = body.license_token?.split('.')[0];
  const signedWith = header ? JSON.parse(Buffer.from(header, 'base64url').toString()).alg : null;
  if (!body.valid || !body.hw_bound || signedWith !== alg) {
    throw new Error(`verify did not answer as the bench expects: ${res.status} ${JSON.stringify(body)}`);
  }
}
