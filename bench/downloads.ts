import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parseVersion } from '../src/modules/releases/version-order.js';
import { cpuMs } from './cpu-profile.js';
import type { FetchResult } from './fetch-file.js';
import { alternate, type Figure, median, type Sample } from './lib.js';
import { runJson, startBaseline, startService } from './processes.js';
import { benchDevice, benchKey, openStorage, type StorageKind, seedLicenses } from './storage.js';

/** The artifact's size (BENCH_DOWNLOAD_MB, 100 by default: megabytes of 10^6 bytes). */
const SIZE = Math.max(1, Number(process.env.BENCH_DOWNLOAD_MB ?? 100)) * 1_000_000;
/** Whole downloads in each measured run (BENCH_DOWNLOADS, 3 by default). */
const TIMES = Math.max(1, Number(process.env.BENCH_DOWNLOADS ?? 3));
const SERVICE = 'the service: the artifact through a download link (GET /v1/releases/files/…)';
const BARE = 'a bare node:http server streaming the file (baseline of D1)';
const DISK = 'the file read from disk with fs.createReadStream, no network';
const FILENAME = 'PhotoTool-1.0.0-x64.AppImage';

interface Run extends Sample {
  /** CPU the serving process spent a megabyte (every thread, µs); none for the disk read. */
  serverUsPerMegabyte?: number;
  clientUsPerMegabyte: number;
}

/**
 * D1: how fast a node serves an artifact's bytes through a license-gated download link, beside
 * the same file streamed by a bare node:http server and read straight from disk, alternating run
 * by run (A B C, C B A…). The service runs in its own process as production runs it (the link is
 * checked, the release read, the download counted, the file sent by @fastify/send); the client
 * (bench/fetch-file.ts) downloads the file whole TIMES times in turn over one kept-alive
 * connection, reading every byte, in a process of its own. The file is random bytes written
 * before the service starts, into the store as an upload leaves it; after the first read it is
 * in the page cache, so every figure is what the processes and the loopback add to memory.
 */
export async function downloadThroughput(kind: StorageKind): Promise<{ text: string; figures: Figure[] }> {
  const storage = await openStorage(kind, 'downloads');
  const stops: (() => Promise<void>)[] = [];
  try {
    const artifactDir = path.join(storage.dir, 'artifacts');
    const blob = writeRandomFile(artifactDir, SIZE);
    const appId = await storage.write(async (db) => {
      const seller = await seedLicenses(db, 1);
      const releaseId = randomUUID();
      const now = new Date();
      await db
        .insertInto('releases')
        .values({
          id: releaseId,
          user_id: seller.userId,
          app_id: seller.appId,
          version: '1.0.0',
          version_order: parseVersion('1.0.0')?.order as string,
          channel: 'stable',
          status: 'published',
          notes: '',
          required_features: [],
          published_at: now,
          created_at: now,
          updated_at: now,
        })
        .execute();
      await db
        .insertInto('release_artifacts')
        .values({
          id: randomUUID(),
          release_id: releaseId,
          user_id: seller.userId,
          app_id: seller.appId,
          filename: FILENAME,
          platform: 'linux',
          arch: 'x64',
          filetype: 'appimage',
          size: SIZE,
          sha256: blob.sha256,
          sha512: blob.sha512,
          created_at: now,
        })
        .execute();
      return seller.appId;
    });
    const service = await startService(storage, { ARTIFACT_DIR: artifactDir });
    stops.push(service.stop);
    const bare = await startBaseline('file-server', { FILE: blob.path }, storage.dir);
    stops.push(bare.stop);

    // One link for the whole run (it works for an hour), asked for as client software asks.
    const answer = await fetch(`${service.api}/releases/download`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        appId,
        key: benchKey(1),
        hwuid: benchDevice(1),
        version: '1.0.0',
        filename: FILENAME,
        platform: 'linux',
        arch: 'x64',
      }),
    });
    if (answer.status !== 200) throw new Error(`no download link: ${answer.status} ${await answer.text()}`);
    // The link names PUBLIC_BASE_URL; the bench's service listens on a port of its own.
    const link = new URL(((await answer.json()) as { downloadUrl: string }).downloadUrl);
    const linkUrl = `${new URL(service.api).origin}${link.pathname}${link.search}`;

    const through = async (url: string, pid: number): Promise<Run> => {
      const before = cpuMs(pid);
      const result = await runJson<FetchResult>('bench/fetch-file.ts', { url, times: TIMES, size: SIZE });
      const megabytes = result.bytes / 1e6;
      return {
        perSecond: result.bytesPerSecond / 1e6,
        serverUsPerMegabyte: ((cpuMs(pid) - before) * 1000) / megabytes,
        clientUsPerMegabyte: result.cpuUsPerMegabyte,
      };
    };
    const samples = (await alternate([
      { name: SERVICE, run: () => through(linkUrl, service.pid) },
      { name: BARE, run: () => through(bare.url, bare.pid) },
      {
        name: DISK,
        run: async (): Promise<Run> => {
          const result = await runJson<FetchResult>('bench/baselines/disk-read.ts', {
            path: blob.path,
            times: TIMES,
            size: SIZE,
          });
          return { perSecond: result.bytesPerSecond / 1e6, clientUsPerMegabyte: result.cpuUsPerMegabyte };
        },
      },
    ])) as Map<string, Run[]>;

    const rate = (name: string) => median((samples.get(name) ?? []).map((run) => run.perSecond));
    const percent = (a: number, b: number) => `${Math.round((a / (b || 1)) * 100)} %`;
    const figures: Figure[] = [
      {
        figure: 'D1',
        measure: `a ${SIZE / 1e6} MB artifact through a download link / a bare node:http server streaming the file`,
        value: `${Math.round(rate(SERVICE))} MB/s, ${percent(rate(SERVICE), rate(BARE))}`,
        goal: '',
      },
      {
        figure: '(D1)',
        measure: 'the same / the file read from disk, no network',
        value: percent(rate(SERVICE), rate(DISK)),
        goal: '',
      },
    ];
    const cpu = (name: string, pick: (run: Run) => number | undefined) => {
      const values = (samples.get(name) ?? []).map(pick).filter((v): v is number => v !== undefined);
      return values.length ? String(Math.round(median(values))) : '';
    };
    const text = [
      `#### Downloads (${kind}): D1`,
      '',
      `A ${SIZE / 1e6} MB file downloaded whole ${TIMES} times in turn a run, over one kept-alive connection; every byte read and dropped.`,
      '',
      '| scenario | median MB/s | spread (min–max) | server CPU µs/MB | client CPU µs/MB |',
      '|---|---:|---:|---:|---:|',
      ...[...samples].map(([name, runs]) => {
        const rates = runs.map((run) => run.perSecond);
        return `| ${name} | ${Math.round(median(rates))} | ${Math.round(Math.min(...rates))}–${Math.round(Math.max(...rates))} | ${cpu(name, (run) => run.serverUsPerMegabyte)} | ${cpu(name, (run) => run.clientUsPerMegabyte)} |`;
      }),
    ].join('\n');
    return { text, figures };
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await storage.drop();
  }
}

/**
 * `size` random bytes stored as the local artifact store keeps an upload
 * (`<dir>/<first two hex digits>/<sha256>`), with the digests the artifact's row names.
 */
function writeRandomFile(dir: string, size: number) {
  fs.mkdirSync(dir, { recursive: true });
  const tmp = path.join(dir, `upload-${randomUUID()}`);
  const sha256 = createHash('sha256');
  const sha512 = createHash('sha512');
  const fd = fs.openSync(tmp, 'w');
  try {
    for (let written = 0; written < size; ) {
      const chunk = randomBytes(Math.min(1 << 20, size - written));
      sha256.update(chunk);
      sha512.update(chunk);
      fs.writeSync(fd, chunk);
      written += chunk.length;
    }
  } finally {
    fs.closeSync(fd);
  }
  const digest = sha256.digest('hex');
  const file = path.join(dir, digest.slice(0, 2), digest);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.renameSync(tmp, file);
  return { path: file, sha256: digest, sha512: sha512.digest('hex') };
}
