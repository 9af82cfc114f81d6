import fs from 'node:fs';
import path from 'node:path';
import { cpuMs, type Profile, summarize } from './cpu-profile.js';
import { load } from './lib.js';
import { startService } from './processes.js';
import { openStorage, type StorageKind, seedLicenses, writeBodies } from './storage.js';

/**
 * `npx tsx bench/profile.ts [pglite|postgresql] [tokens|off] [one-key] [no-profile] [trace-gc]
 * [rate=N] [warmup=S] [latencies=FILE] [NAME=value…]`: the service in its own process (with `--cpu-prof` unless
 * no-profile, and NAME=value added to its environment) under the verify load of P1/P2, rotating
 * over BENCH_LICENSES licenses or on one key; with rate=N, at N requests a second paced as P4
 * paces them. The load runs S seconds unmeasured first (by default long enough to reach every
 * license once, plus 2). Prints the rate, latency, the service's CPU per request
 * (every thread, from /proc), the generator's (it shares the two cores) and the functions with the most self time in its main thread; with
 * trace-gc, the garbage collector's pauses during the load; with latencies=FILE (paced only), every
 * measured request's due time and latency written to FILE (see `latencyFile` in bench/load.ts).
 * Profile before optimising.
 */
const args = process.argv.slice(2);
const kind: StorageKind = args.includes('postgresql') ? 'PostgreSQL' : 'PGlite';
const tokens = !args.includes('off');
const oneKey = args.includes('one-key');
const profiling = !args.includes('no-profile');
const traceGc = args.includes('trace-gc');
const settings = args
  .filter((arg) => arg.includes('='))
  .map((arg) => [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] as [string, string]);
const setting = (name: string) => settings.find(([n]) => n === name)?.[1];
const rate = Number(setting('rate') ?? 0);
const licenses = Number(process.env.BENCH_LICENSES ?? 10_000);
// The warm-up reaches every license once (and 2 s more), or the measured window would still meet
// first verifies of licenses, which read the database and fill the cache. Unpaced, as if at
// 1,000 a second, below what a verify with a token reaches on two cores even in a slow hour.
const warmUp = Number(setting('warmup') ?? Math.ceil(licenses / (rate || 1000)) + 2);
const latencyFile = setting('latencies');
const extraEnv = Object.fromEntries(
  settings.filter(([name]) => name !== 'rate' && name !== 'warmup' && name !== 'latencies'),
);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);

const storage = await openStorage(kind, 'profile');
try {
  await storage.write((db) => seedLicenses(db, licenses));
  const bodies = writeBodies(storage, 'bodies.jsonl', oneKey ? 1 : licenses);
  const profiles = path.join(storage.dir, 'profiles');
  const service = await startService(storage, { ...(tokens ? {} : { LICENSE_TOKENS: 'off' }), ...extraEnv }, [
    ...(profiling ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : []),
    ...(traceGc ? ['--trace-gc'] : []),
  ]);
  const paced = rate ? { overallRate: rate } : {};
  await load(`${service.api}/licenses/verify`, { bodies, seconds: warmUp, ...paced });
  const logFile = path.join(storage.dir, 'service.log');
  const logFrom = fs.statSync(logFile).size;
  const cpuBefore = cpuMs(service.pid);
  // The main thread's id is the process id.
  const mainBefore = cpuMs(service.pid, service.pid);
  const measured = await load(`${service.api}/licenses/verify`, {
    bodies,
    seconds,
    ...paced,
    ...(rate && latencyFile ? { latencyFile: path.resolve(latencyFile) } : {}),
  });
  const cpu = cpuMs(service.pid) - cpuBefore;
  const mainCpu = cpuMs(service.pid, service.pid) - mainBefore;
  const logTo = fs.statSync(logFile).size;
  await service.stop();
  // Every request the service answered in the window: paced, that includes the generator's lead-in.
  const requests = measured.requests ?? measured.perSecond * seconds;
  console.log(
    `${measured.perSecond} req/s, p50 ${measured.p50Ms} ms, p99 ${measured.p99Ms} ms, service CPU ${(cpu / requests).toFixed(3)} ms/request (main thread ${(mainCpu / requests).toFixed(3)}), generator ${measured.cpuUsPerRequest ?? '?'} µs/request`,
  );
  if (traceGc) console.log(gcPauses(fs.readFileSync(logFile, 'utf8').slice(logFrom, logTo)));
  if (profiling) report(profiles);
} finally {
  await storage.drop();
}

/** `--trace-gc` lines: how many collections of each kind, their pauses' total and longest. */
function gcPauses(output: string): string {
  const kinds = new Map<string, number[]>();
  for (const match of output.matchAll(/: (Scavenge|Mark-Compact|Mark-sweep)[^,]*?, ([\d.]+) \/ [\d.]+ ms/g)) {
    const list = kinds.get(match[1] as string) ?? [];
    list.push(Number(match[2]));
    kinds.set(match[1] as string, list);
  }
  return [...kinds]
    .map(([kind, pauses]) => {
      const sorted = [...pauses].sort((a, b) => a - b);
      const total = pauses.reduce((a, b) => a + b, 0);
      return `${kind}: ${pauses.length} in ${seconds} s, ${total.toFixed(1)} ms in all, median ${sorted[Math.floor(sorted.length / 2)]} ms, longest ${sorted.at(-1)} ms`;
    })
    .join('\n');
}

function report(profiles: string): void {
  const file = fs.readdirSync(profiles).find((name) => name.endsWith('.cpuprofile'));
  if (!file) throw new Error('the service wrote no profile');
  const kept = path.join(
    process.cwd(),
    `verify-${kind.toLowerCase()}-${tokens ? 'tokens' : 'off'}.cpuprofile`,
  );
  fs.copyFileSync(path.join(profiles, file), kept);
  console.log(`profile: ${kept}`);
  console.log(summarize(JSON.parse(fs.readFileSync(kept, 'utf8')) as Profile));
}
