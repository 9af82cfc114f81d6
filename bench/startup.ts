import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePorts } from '../src/testing/free-ports.js';
import { type Figure, median, ROUNDS } from './lib.js';
import { admin, type StorageKind } from './storage.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FLOOR = 'a bare Node.js HTTP server, to its first answer (baseline)';
const FIRST = 'npm start on an empty store, to its first answer';
const RESTART = 'npm start again on that store, to its first answer';
const MIGRATE = 'licensing migrate on an empty store, to its exit';
/** The goals issue 41 sets for a first start and a restart on two cores, in seconds. */
const FIRST_GOAL_S = 10;
const RESTART_GOAL_S = 3;
/** A start that has not answered by then has failed. */
const GIVE_UP_MS = 120_000;

/**
 * S1–S3: how long a node takes to answer, as an operator sees it. Each round, in turns (A B A B,
 * every other round reversed): a bare Node.js HTTP server started and asked once (the floor any
 * Node.js service pays to start), `npm start` on an empty store (a newcomer's first start: the
 * embedded store copied from the build's template, or the PostgreSQL database migrated), `npm
 * start` again on the store it left (a restart), and `licensing migrate` on an empty store. Times
 * run from the spawn to the first answer of `GET /healthz` on the core port, asked every 10 ms;
 * the build is current (`npm start` only checks it), as after `npm install`. No settings but the
 * ports and the store: a newcomer's defaults.
 */
export async function startupTimes(kind: StorageKind): Promise<{ text: string; figures: Figure[] }> {
  const samples = new Map<string, number[]>([FLOOR, FIRST, RESTART, MIGRATE].map((name) => [name, []]));
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-bench-startup-'));
  const made: EmptyStore[] = [];
  const fresh = async () => {
    const store = await emptyStore(kind, scratch);
    made.push(store);
    return store;
  };
  try {
    const order: (() => Promise<void>)[] = [
      async () => {
        samples.get(FLOOR)?.push(await bareServerStart(scratch));
      },
      async () => {
        const store = await fresh();
        samples.get(FIRST)?.push(await serviceStart(store, scratch));
        samples.get(RESTART)?.push(await serviceStart(store, scratch));
      },
      async () => {
        samples.get(MIGRATE)?.push(await migrateTime(await fresh(), scratch));
      },
    ];
    // One unmeasured round first: the files the starts read come from disk once, as after a boot.
    for (const step of order) await step();
    for (const list of samples.values()) list.length = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const step of round % 2 === 0 ? order : [...order].reverse()) await step();
    }
  } finally {
    for (const store of made) await store.drop();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  const seconds = (name: string) => median(samples.get(name) ?? []) / 1000;
  const floor = seconds(FLOOR);
  const lines = [
    `#### Start-up (${kind})`,
    '',
    '| what | median s | spread (min–max) s | × the bare server |',
    '|---|---:|---:|---:|',
    ...[...samples].map(([name, runs]) => {
      const values = runs.map((ms) => ms / 1000);
      return `| ${name} | ${median(values).toFixed(2)} | ${Math.min(...values).toFixed(2)}–${Math.max(...values).toFixed(2)} | ${(median(values) / floor).toFixed(1)} |`;
    }),
  ];
  return {
    text: lines.join('\n'),
    figures: [
      {
        figure: 'S1',
        measure: 'first start to first answer',
        value: `${seconds(FIRST).toFixed(1)} s`,
        goal: `≤ ${FIRST_GOAL_S} s`,
      },
      {
        figure: 'S2',
        measure: 'restart to first answer',
        value: `${seconds(RESTART).toFixed(1)} s`,
        goal: `≤ ${RESTART_GOAL_S} s`,
      },
      {
        figure: 'S3',
        measure: 'migrate an empty store',
        value: `${seconds(MIGRATE).toFixed(1)} s`,
        goal: '',
      },
    ],
  };
}

interface EmptyStore {
  env: Record<string, string>;
  drop(): Promise<void>;
}

/** A folder with nothing in it, or a new empty database on the server DATABASE_URL names. */
async function emptyStore(kind: StorageKind, scratch: string): Promise<EmptyStore> {
  const dataDir = fs.mkdtempSync(path.join(scratch, 'data-'));
  if (kind === 'PGlite') {
    return {
      env: { DATA_DIR: dataDir },
      drop: async () => fs.rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  const server = process.env.DATABASE_URL;
  if (!server) throw new Error('DATABASE_URL must name a PostgreSQL server to bench on PostgreSQL');
  const name = `licensing_bench_${randomBytes(5).toString('hex')}`;
  await admin(server, `create database ${name}`);
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    env: { DATA_DIR: dataDir, DATABASE_URL: url.href },
    async drop() {
      await admin(server, `drop database if exists ${name} with (force)`);
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Milliseconds from spawning `npm start` to its first answer; the service is stopped after. */
async function serviceStart(store: EmptyStore, scratch: string): Promise<number> {
  const [port, payPort, metricsPort, healthPort] = (await freePorts(4)) as [number, number, number, number];
  const env = {
    ...store.env,
    PORT: String(port),
    PAY_PORT: String(payPort),
    METRICS_PORT: String(metricsPort),
    HEALTH_PORT: String(healthPort),
  };
  const took = await timeToAnswer('npm', ['start', '--silent'], env, port, path.join(scratch, 'service.log'));
  // The embedded store is free again once the stopped service has let go of its folder.
  const lock = path.join(store.env.DATA_DIR as string, 'pglite.lock');
  while (fs.existsSync(lock)) await new Promise((resolve) => setTimeout(resolve, 20));
  return took;
}

async function bareServerStart(scratch: string): Promise<number> {
  const [port] = (await freePorts(1)) as [number];
  const script = `require('node:http').createServer((q, s) => s.end('ok')).listen(${port}, '127.0.0.1')`;
  return timeToAnswer(process.execPath, ['-e', script], {}, port, path.join(scratch, 'bare.log'));
}

async function migrateTime(store: EmptyStore, scratch: string): Promise<number> {
  const started = performance.now();
  const child = spawnLogged(
    process.execPath,
    ['dist/cli.js', 'migrate'],
    store.env,
    path.join(scratch, 'migrate.log'),
  );
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`migrate exited with ${code}; see ${scratch}/migrate.log`);
  return performance.now() - started;
}

/** Spawns a process group, asks `GET /healthz` on `port` every 10 ms, answers the time to a 200, and stops it. */
async function timeToAnswer(
  command: string,
  args: string[],
  env: Record<string, string>,
  port: number,
  logFile: string,
): Promise<number> {
  const started = performance.now();
  const child = spawnLogged(command, args, env, logFile);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    for (;;) {
      if (await answers(port)) return performance.now() - started;
      if (child.exitCode !== null || performance.now() - started > GIVE_UP_MS) {
        throw new Error(`${command} ${args.join(' ')} did not answer; see ${logFile}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    // npm runs the service in a shell of its own: the whole group is stopped.
    process.kill(-(child.pid as number), 'SIGTERM');
    await exited;
  }
}

function spawnLogged(
  command: string,
  args: string[],
  env: Record<string, string>,
  logFile: string,
): ChildProcess {
  const out = fs.openSync(logFile, 'a');
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', out, out],
    detached: true,
  });
  fs.closeSync(out);
  return child;
}

function answers(port: number): Promise<boolean> {
  return fetch(`http://127.0.0.1:${port}/healthz`).then(
    (response) => response.ok,
    () => false,
  );
}
