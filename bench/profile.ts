import fs from 'node:fs';
import path from 'node:path';
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

/** User and system CPU of a process so far, every thread, in ms (Linux). */
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

interface Profile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time per function, and time including callees, the top 40 of each. */
function summarize(profile: Profile): string {
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const name = (id: number) => {
    const frame = byId.get(id)?.callFrame;
    if (!frame) return '?';
    const file = frame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/(src|dist)\//, '$1/');
    return `${frame.functionName || '(anonymous)'} ${file}:${frame.lineNumber + 1}`;
  };
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const selfByName = new Map<string, number>();
  const inclusive = new Map<string, number>();
  for (const [id, time] of self) {
    selfByName.set(name(id), (selfByName.get(name(id)) ?? 0) + time);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const n = name(at);
      if (seen.has(n)) continue;
      seen.add(n);
      inclusive.set(n, (inclusive.get(n) ?? 0) + time);
    }
  }
  const top = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 40)
      .map(([n, t]) => `${((100 * t) / total).toFixed(1).padStart(5)} %  ${n}`)
      .join('\n');
  return `self time:\n${top(selfByName)}\n\nincluding callees:\n${top(inclusive)}`;
}
