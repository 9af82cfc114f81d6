import os from 'node:os';
import { analyticsRoutes } from './analytics.js';
import { downloadThroughput } from './downloads.js';
import { httpOverhead } from './http-overhead.js';
import { CONNECTIONS, type Figure, figuresTable, ROUNDS, SECONDS, storages } from './lib.js';
import { verifyAtScale } from './scale.js';
import { soak } from './soak.js';
import { startupTimes } from './startup.js';
import type { StorageKind } from './storage.js';
import { verifyPath } from './verify.js';
import { webhookDelivery } from './webhooks.js';
import { writePaths } from './writes.js';

/**
 * `npm run bench [-- section… ] [--both]` prints markdown tables. Figures are only comparable
 * within one run: each is a ratio to a baseline measured in the same run, alternating with it.
 * - verify, scale, webhooks, writes, downloads (the default): P1–P6, W1–W2 (writes: PostgreSQL only)
 *   and D1 (a 100 MB artifact through a download link, about 30 s), with the service, every baseline and the load
 *   generator in processes of their own, on PGlite, or PostgreSQL when DATABASE_URL is set
 *   (BENCH_STORAGE=both or --both: each in turn);
 * - startup (by name only): S1–S3, a first start, a restart and a migrate, timed from the spawn;
 * - http, analytics: older in-process tables (the service inside the bench's process);
 * - soak: memory over a long verify run, and bursts of 2,000 connections at the default listen
 *   backlog and at Node's 511 (services in processes of their own).
 * BENCH_SECONDS (10), BENCH_ROUNDS (3), BENCH_CONNECTIONS (16), BENCH_LICENSES (10,000),
 * BENCH_LARGE (1,000,000), BENCH_DELIVERIES (5,000), BENCH_DOWNLOAD_MB (100), BENCH_DOWNLOADS (3) change the sizes.
 */
const perStorage: Record<string, (kind: StorageKind) => Promise<{ text: string; figures: Figure[] }>> = {
  verify: verifyPath,
  scale: verifyAtScale,
  webhooks: webhookDelivery,
  writes: writePaths,
  startup: startupTimes,
  downloads: downloadThroughput,
};
/** What `npm run bench` runs when no section is named. */
const DEFAULT_SECTIONS = ['verify', 'scale', 'webhooks', 'writes', 'downloads'];
const once: Record<string, () => Promise<string>> = { http: httpOverhead, analytics: analyticsRoutes, soak };

const args = process.argv.slice(2);
const named = args.filter((arg) => !arg.startsWith('--'));
const chosen = named.length ? named : DEFAULT_SECTIONS;
const unknown = chosen.filter((name) => !(name in perStorage) && !(name in once));
if (unknown.length) {
  console.error(
    `unknown section ${unknown.join(', ')}; sections: ${[...Object.keys(perStorage), ...Object.keys(once)].join(', ')}`,
  );
  process.exit(2);
}

const machine = `${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}, Node ${process.version}`;
const loadAverage = os
  .loadavg()
  .map((n) => n.toFixed(1))
  .join(' ');
const sections: string[] = [
  `### ${new Date().toISOString().slice(0, 10)}: ${machine}, load average at start ${loadAverage}`,
  `${ROUNDS} rounds of ${SECONDS} s, ${CONNECTIONS} connections.`,
];
for (const kind of storages(args)) {
  const figures: Figure[] = [];
  const tables: string[] = [];
  for (const [name, run] of Object.entries(perStorage).filter(([name]) => chosen.includes(name))) {
    console.error(`bench: ${name} on ${kind}…`);
    const result = await run(kind);
    figures.push(...result.figures);
    tables.push(result.text);
  }
  if (figures.length) sections.push(`#### Figures (${kind})\n\n${figuresTable(figures)}`, ...tables);
}
for (const [name, run] of Object.entries(once).filter(([name]) => chosen.includes(name))) {
  console.error(`bench: ${name}…`);
  sections.push(await run());
}
console.log(`${sections.join('\n\n')}\n`);
