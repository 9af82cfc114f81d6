import fs from 'node:fs';
import path from 'node:path';
import { cpuMs, type Profile, summarize } from './cpu-profile.js';
import { load } from './lib.js';
import { startService } from './processes.js';
import { openStorage, type StorageKind, seedLicenses, writeBodies } from './storage.js';

/**
 * `npx tsx bench/profile.ts [pglite|postgresql] [tokens|off] [one-key] [no-profile] [NAME=value…]`:
 * the service in its own process (with `--cpu-prof` unless no-profile, and NAME=value added to
 * its environment) under the verify load of P1/P2, rotating over BENCH_LICENSES licenses or on
 * one key. Prints the rate, the service's CPU per request (every thread, from /proc) and the
 * functions with the most self time in its main thread. Profile before optimising.
 */
const args = process.argv.slice(2);
const kind: StorageKind = args.includes('postgresql') ? 'PostgreSQL' : 'PGlite';
const tokens = !args.includes('off');
const oneKey = args.includes('one-key');
const profiling = !args.includes('no-profile');
const extraEnv = Object.fromEntries(
  args.filter((arg) => arg.includes('=')).map((arg) => arg.split('=', 2) as [string, string]),
);
const licenses = Number(process.env.BENCH_LICENSES ?? 10_000);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);

const storage = await openStorage(kind, 'profile');
try {
  await storage.write((db) => seedLicenses(db, licenses));
  const bodies = writeBodies(storage, 'bodies.jsonl', oneKey ? 1 : licenses);
  const profiles = path.join(storage.dir, 'profiles');
  const service = await startService(
    storage,
    { ...(tokens ? {} : { LICENSE_TOKENS: 'off' }), ...extraEnv },
    profiling ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : [],
  );
  await load(`${service.api}/licenses/verify`, { bodies, seconds: 2 });
  const cpuBefore = cpuMs(service.pid);
  const measured = await load(`${service.api}/licenses/verify`, { bodies, seconds });
  const cpu = cpuMs(service.pid) - cpuBefore;
  await service.stop();
  const perRequest = cpu / (measured.perSecond * seconds);
  console.log(
    `${measured.perSecond} req/s, p50 ${measured.p50Ms} ms, p99 ${measured.p99Ms} ms, service CPU ${perRequest.toFixed(3)} ms/request`,
  );
  if (profiling) report(profiles);
} finally {
  await storage.drop();
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
