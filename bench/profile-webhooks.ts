import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { Db } from '../src/platform/db/database.js';
import { cpuMs, cpuMsOf, type Profile, summarize, threadCpuMs } from './cpu-profile.js';
import { startBaseline, startService } from './processes.js';
import { openStorage, type StorageKind, seedLicenses } from './storage.js';
import { commitEvents, receiverStats, waitForCount } from './webhooks.js';

/**
 * `npx tsx bench/profile-webhooks.ts [pglite] [no-profile] [NAME=value…]`: P6's load
 * (BENCH_DELIVERIES license.created events committed at once for one endpoint, delivered over TLS
 * to the bench receiver), on PostgreSQL (`DATABASE_URL`) or PGlite, with the service under
 * `--cpu-prof`. Prints the rate, the CPU each delivery costs the service (every thread) and the
 * receiver, and where the service's main thread spends it. PGlite belongs to the service's
 * process, so there each round is committed while the service is stopped, timed from the moment
 * it is up again (as P6 does), and the profile is the last round's. Profile before optimising.
 */
const args = process.argv.slice(2);
const kind: StorageKind = args.includes('pglite') ? 'PGlite' : 'PostgreSQL';
const profiling = !args.includes('no-profile');
const extraEnv = Object.fromEntries(
  args
    .filter((arg) => arg.includes('='))
    .map((arg) => [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] as [string, string]),
);
const count = Number(process.env.BENCH_DELIVERIES ?? 5000);
const rounds = 3;

const storage = await openStorage(kind, 'profile-webhooks');
try {
  const key = path.join(storage.dir, 'tls-key.pem');
  const cert = path.join(storage.dir, 'tls-cert.pem');
  execFileSync(
    'openssl',
    [
      ...'req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1'.split(
        ' ',
      ),
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  const receiver = await startBaseline('receiver', { TLS_KEY: key, TLS_CERT: cert }, storage.dir);
  const seller = await storage.write((db) => seedLicenses(db, 0));
  const profiles = path.join(storage.dir, 'profiles');
  const begin = () =>
    startService(
      storage,
      { JOBS: 'on', WEBHOOK_ALLOW_PRIVATE: 'true', NODE_EXTRA_CA_CERTS: cert, ...extraEnv },
      profiling ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : [],
    );
  let service = kind === 'PostgreSQL' ? await begin() : null;
  const stats = () => receiverStats(receiver.url, fs.readFileSync(cert));
  try {
    for (let round = 0; round <= rounds; round++) {
      const target = `/hooks/${round}`;
      const size = round === 0 ? Math.ceil(count / 10) : count;
      const commit = (db: Db) => commitEvents(db, seller, `${receiver.url}${target}`, size, round + 1);
      let from = Date.now();
      if (!service) {
        await storage.write(commit);
        if (profiling) fs.rmSync(profiles, { recursive: true, force: true });
        service = await begin();
        from = service.readyAt;
      }
      const serviceBefore = cpuMs(service.pid);
      // The main thread's id is the process id.
      const mainBefore = cpuMs(service.pid, service.pid);
      const threadsBefore = threadCpuMs(service.pid);
      const receiverBefore = cpuMs(receiver.pid);
      const databaseBefore = cpuMsOf('postgres');
      if (kind === 'PostgreSQL') {
        await storage.write(commit);
        from = Date.now();
      }
      const seen = await waitForCount(stats, target, size);
      // The jobs start just before the service says it is up: a delivery may come first.
      from = Math.min(from, seen.firstAt);
      if (round > 0) {
        const perDelivery = (pid: number, before: number) => ((cpuMs(pid) - before) / size).toFixed(3);
        const database =
          kind === 'PostgreSQL'
            ? `, PostgreSQL ${((cpuMsOf('postgres') - databaseBefore) / size).toFixed(3)} ms (the events' commit included)`
            : '';
        console.log(
          `round ${round}: ${threadsPerDelivery(threadsBefore, threadCpuMs(service.pid), size)}\n  ${Math.round(size / ((seen.lastAt - from) / 1000))}/s, first receipt after ${seen.firstAt - from} ms; CPU a delivery: service ${perDelivery(service.pid, serviceBefore)} ms (main thread ${((cpuMs(service.pid, service.pid) - mainBefore) / size).toFixed(3)}), receiver ${perDelivery(receiver.pid, receiverBefore)} ms${database}`,
        );
      }
      // PGlite: the next round is committed while the service is stopped (the last one is profiled).
      if (kind === 'PGlite' && round < rounds) {
        await service.stop();
        service = null;
      }
    }
  } finally {
    await service?.stop();
    await receiver.stop();
  }
  if (profiling) {
    const file = fs.readdirSync(profiles).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error('the service wrote no profile');
    const kept = path.join(process.cwd(), `webhooks-${kind.toLowerCase()}.cpuprofile`);
    fs.copyFileSync(path.join(profiles, file), kept);
    console.log(`profile: ${kept}`);
    console.log(summarize(JSON.parse(fs.readFileSync(kept, 'utf8')) as Profile));
  }
} finally {
  await storage.drop();
}

/** Each thread's CPU a delivery, by name, the busiest first: `main 0.41, V8 Worker 0.12, …` (ms). */
function threadsPerDelivery(before: Map<string, number>, after: Map<string, number>, size: number): string {
  return [...after]
    .map(([name, ms]) => [name, (ms - (before.get(name) ?? 0)) / size] as const)
    .filter(([, ms]) => ms >= 0.001)
    .sort((a, b) => b[1] - a[1])
    .map(([name, ms]) => `${name} ${ms.toFixed(3)}`)
    .join(', ');
}
