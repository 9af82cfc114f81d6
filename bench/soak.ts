import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { killAll, serve } from '../src/testing/cli-process.js';
import { httpClient } from '../src/testing/http-client.js';
import { scratchDatabase } from '../src/testing/scratch-database.js';

/**
 * Two runs against the service in its own process, as in production (the load generator is
 * this process):
 * - a verify soak over many licenses, with the node's resident memory sampled from /proc before,
 *   during and after: it must stay flat (no growth with requests served);
 * - a burst far beyond capacity (many connections at once), counting how the node answered and
 *   how fast /v1/health answered meanwhile: excess is shed with 503/429, health stays quick.
 * SOAK_SECONDS sets the soak's length (default 60); the burst lasts a quarter of it.
 */
export async function soak(): Promise<string> {
  const seconds = Number(process.env.SOAK_SECONDS ?? 60);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-soak-'));
  // On PostgreSQL a database of its own, dropped afterwards (nothing left in the named one).
  const scratch = await scratchDatabase();
  const node = await serve({
    NODE_ENV: 'production',
    DATA_DIR: dataDir,
    DATABASE_URL: scratch.url,
    JWT_SECRET: 'soak-benchmark-secret-of-at-least-32-characters',
    LOG_LEVEL: 'warn',
    PASSWORD_HASH_COST: '1024',
    VERIFY_RATE_LIMIT: '1000000',
    VERIFY_KEY_RATE_LIMIT: '1000000',
    AUTH_RATE_LIMIT: '100000',
    // Load shedding as in production (the test helpers turn it off).
    MAX_EVENT_LOOP_DELAY: '1000',
  });
  try {
    const pid = node.proc.child.pid as number;
    const api = httpClient(`${node.api}/v1`);
    const { token } = (
      await api.post('/auth/register', { email: `soak-${Date.now()}@example.com`, password: 'soak password' })
    ).expect(201).body;
    const appId = (await api.post('/apps', { name: 'Soak' }, { token })).expect(201).body.id;
    const keys: string[] = [];
    for (let i = 0; i < 500; i++) {
      keys.push(
        (
          await api.post(
            `/apps/${appId}/licenses`,
            { email: `buyer${i}@example.com`, maxDevices: 5 },
            { token },
          )
        ).expect(201).body.key,
      );
    }
    let next = 0;
    const verify = (connections: number, duration: number, timeout = 10) =>
      autocannon({
        url: `${node.api}/v1/licenses/verify`,
        connections,
        duration,
        timeout,
        requests: [
          {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            setupRequest: (request) => {
              next = (next + 1) % (keys.length * 3);
              const key = keys[next % keys.length];
              return { ...request, body: JSON.stringify({ key, hwuid: `device-${next % 3}` }) };
            },
          },
        ],
      });

    // Warm up (JIT, the key set, devices bound), then measure memory over the soak.
    await verify(20, 5);
    const samples: number[] = [rssMb(pid)];
    const sampler = setInterval(() => samples.push(rssMb(pid)), Math.max(1000, (seconds * 1000) / 10));
    const soaked = await verify(20, seconds);
    clearInterval(sampler);
    samples.push(rssMb(pid));

    // The burst: far more connections than the node serves well, health probed throughout.
    const healthMs: number[] = [];
    const healthStatuses = new Map<number, number>();
    let probing = true;
    const prober = (async () => {
      while (probing) {
        const started = performance.now();
        const res = await fetch(`${node.api}/v1/health`, { signal: AbortSignal.timeout(10_000) }).catch(
          () => null,
        );
        healthMs.push(performance.now() - started);
        const status = res?.status ?? 0;
        healthStatuses.set(status, (healthStatuses.get(status) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const statuses = new Map<string, number>();
    const burst = await verify(2000, Math.max(5, Math.round(seconds / 4)), 30);
    probing = false;
    await prober;
    for (const [key, value] of Object.entries(burst.statusCodeStats ?? {}))
      statuses.set(key, value.count ?? 0);
    const alive = node.proc.child.exitCode === null;

    const [first, ...rest] = samples;
    const last = rest.at(-1) ?? first;
    const sorted = [...healthMs].sort((a, b) => a - b);
    const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]?.toFixed(1);
    const storage = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';
    return [
      `### Soak and overload (${storage}, service in its own process)`,
      '',
      `Verify soak: ${seconds} s at 20 connections over ${keys.length} licenses, ${soaked.requests.total} requests, ${Math.round(soaked.requests.average)}/s, errors ${soaked.errors + soaked.non2xx}.`,
      '',
      '| resident memory (MB) | before | max during | after | change |',
      '|---|---:|---:|---:|---:|',
      `| node | ${first} | ${Math.max(...samples)} | ${last} | ${((((last ?? 0) - (first ?? 0)) / (first || 1)) * 100).toFixed(1)} % |`,
      '',
      `Burst: 2000 connections for ${Math.max(5, Math.round(seconds / 4))} s; answers by status: ${[...statuses].map(([s, n]) => `${s}: ${n}`).join(', ') || 'none'}; client errors (timeouts, resets) ${burst.errors}; node alive after: ${alive ? 'yes' : 'no'}.`,
      `Health during the burst: ${healthMs.length} probes, statuses ${[...healthStatuses].map(([s, n]) => `${s}: ${n}`).join(', ')}, p50 ${pct(0.5)} ms, p99 ${pct(0.99)} ms, max ${sorted.at(-1)?.toFixed(1)} ms.`,
    ].join('\n');
  } finally {
    node.proc.child.kill('SIGTERM');
    await node.proc.exited;
    killAll();
    await scratch.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Resident set size of a process, in MB, from /proc (Linux). */
function rssMb(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}
