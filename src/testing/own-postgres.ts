import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './harness.js';

const run = promisify(execFile);

/**
 * A PostgreSQL server of the test's own, for fault tests that restart, stop or cut it: the
 * shared server other tests use is never touched. Built from the machine's PostgreSQL binaries
 * (`initdb`, `pg_ctl`) in a temporary folder on a free loopback port, run as the `postgres`
 * user when the tests run as root (PostgreSQL refuses to run as root), and removed by remove().
 */
export interface OwnPostgres {
  url: string;
  port: number;
  /** `pg_ctl restart -m fast`, as an operator's `pg_ctlcluster … restart` does. */
  restart(): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** SIGSTOP / SIGCONT to every process of the server: up, but answering nothing. */
  freeze(): Promise<void>;
  thaw(): Promise<void>;
  /** Ends every connection to the test database but the caller's (`pg_terminate_backend`). */
  terminateConnections(): Promise<number>;
  /** One query on a connection of its own (to read what the service wrote). */
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  remove(): Promise<void>;
}

/** Whether this machine has PostgreSQL's server binaries (fault tests skip without them). */
export function postgresBinaries(): string | null {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return null;
  const versions = fs
    .readdirSync(root)
    .filter((name) => fs.existsSync(path.join(root, name, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? path.join(root, versions[0], 'bin') : null;
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const bin = postgresBinaries();
  if (!bin) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql');
  const asRoot = process.getuid?.() === 0;
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-pg-'));
  const data = path.join(folder, 'data');
  const logFile = path.join(folder, 'server.log');
  if (asRoot) await run('chown', ['postgres:', folder]);
  const port = await freePort();

  const tool = (name: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', path.join(bin, name), ...args])
      : run(path.join(bin, name), args);
  const options = `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`;
  const pgCtl = (...args: string[]) =>
    tool('pg_ctl', ['-D', data, '-l', logFile, '-o', options, '-w', ...args]);

  await tool('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  await pgCtl('start');
  const url = `postgres://postgres@127.0.0.1:${port}/licensing`;
  await query(`postgres://postgres@127.0.0.1:${port}/postgres`, 'create database licensing');

  return {
    url,
    port,
    restart: async () => {
      await pgCtl('-m', 'fast', 'restart');
    },
    stop: async () => {
      await pgCtl('-m', 'fast', 'stop');
    },
    start: async () => {
      await pgCtl('start');
    },
    freeze: () => signalAll(data, 'SIGSTOP'),
    thaw: () => signalAll(data, 'SIGCONT'),
    async terminateConnections() {
      const rows = await query<{ ended: boolean }>(
        url,
        `select pg_terminate_backend(pid) as ended from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid()`,
      );
      return rows.filter((row) => row.ended).length;
    },
    query: (text, values) => query(url, text, values),
    async remove() {
      await pgCtl('-m', 'immediate', 'stop').catch(() => {});
      fs.rmSync(folder, { recursive: true, force: true });
    },
  };
}

/**
 * Sends a signal to the postmaster (first line of postmaster.pid), then to each of its children.
 * The postmaster goes first and its children are listed only after: a backend it forked between
 * the listing and a SIGSTOP (the node's pool opening a connection) would otherwise stay running
 * and answer queries through a "frozen" server (seen once in CI: a new device bound while frozen).
 */
async function signalAll(data: string, signal: NodeJS.Signals): Promise<void> {
  const postmaster = Number(fs.readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  process.kill(postmaster, signal);
  const { stdout } = await run('pgrep', ['-P', String(postmaster)]).catch(() => ({ stdout: '' }));
  const children = stdout.split('\n').filter(Boolean).map(Number);
  for (const pid of children) {
    try {
      process.kill(pid, signal);
    } catch (error) {
      // A backend that ended since the listing has nothing left to signal.
      if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
    }
  }
}

async function query<R extends pg.QueryResultRow>(
  url: string,
  text: string,
  values?: unknown[],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}
