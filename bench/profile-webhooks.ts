import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { cpuMs, cpuMsOf, type Profile, summarize } from './cpu-profile.js';
import { startBaseline, startService } from './processes.js';
import { openStorage, seedLicenses } from './storage.js';
import { commitEvents, receiverStats, waitForCount } from './webhooks.js';

/**
 * `npx tsx bench/profile-webhooks.ts [no-profile] [NAME=value…]`: P6's load (BENCH_DELIVERIES
 * license.created events committed at once for one endpoint, delivered over TLS to the bench
 * receiver), on PostgreSQL (`DATABASE_URL`), with the service under `--cpu-prof`. Prints the
 * rate, the CPU each delivery costs the service (every thread) and the receiver, and where the
 * service's main thread spends it. Profile before optimising.
 */
const args = process.argv.slice(2);
const profiling = !args.includes('no-profile');
const extraEnv = Object.fromEntries(
  args
    .filter((arg) => arg.includes('='))
    .map((arg) => [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] as [string, string]),
);
const count = Number(process.env.BENCH_DELIVERIES ?? 5000);
const rounds = 3;

const storage = await openStorage('PostgreSQL', 'profile-webhooks');
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
  const service = await startService(
    storage,
    { JOBS: 'on', WEBHOOK_ALLOW_PRIVATE: 'true', NODE_EXTRA_CA_CERTS: cert, ...extraEnv },
    profiling ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : [],
  );
  const stats = () => receiverStats(receiver.url, fs.readFileSync(cert));
  try {
    for (let round = 0; round <= rounds; round++) {
      const target = `/hooks/${round}`;
      const size = round === 0 ? Math.ceil(count / 10) : count;
      const serviceBefore = cpuMs(service.pid);
      // The main thread's id is the process id.
      const mainBefore = cpuMs(service.pid, service.pid);
      const receiverBefore = cpuMs(receiver.pid);
      const databaseBefore = cpuMsOf('postgres');
      const from = await storage.write(async (db) => {
        await commitEvents(db, seller, `${receiver.url}${target}`, size, round + 1);
        return Date.now();
      });
      const seen = await waitForCount(stats, target, size);
      if (round === 0) continue;
      const perDelivery = (pid: number, before: number) => ((cpuMs(pid) - before) / size).toFixed(3);
      console.log(
        `round ${round}: ${Math.round(size / ((seen.lastAt - from) / 1000))}/s, first receipt after ${seen.firstAt - from} ms; CPU a delivery: service ${perDelivery(service.pid, serviceBefore)} ms (main thread ${((cpuMs(service.pid, service.pid) - mainBefore) / size).toFixed(3)}), receiver ${perDelivery(receiver.pid, receiverBefore)} ms, PostgreSQL ${((cpuMsOf('postgres') - databaseBefore) / size).toFixed(3)} ms (the events' commit included)`,
      );
    }
  } finally {
    await service.stop();
    await receiver.stop();
  }
  if (profiling) {
    const file = fs.readdirSync(profiles).find((name) => name.endsWith('.cpuprofile'));
    if (!file) throw new Error('the service wrote no profile');
    const kept = path.join(process.cwd(), 'webhooks-postgresql.cpuprofile');
    fs.copyFileSync(path.join(profiles, file), kept);
    console.log(`profile: ${kept}`);
    console.log(summarize(JSON.parse(fs.readFileSync(kept, 'utf8')) as Profile));
  }
} finally {
  await storage.drop();
}
