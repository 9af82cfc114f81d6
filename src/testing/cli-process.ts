import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { fillWithMigratedDatabase } from './memory-image.js';
import { scratchDatabase } from './scratch-database.js';
import { nodeArgsFor, serviceEntry } from './service-entry.js';
import { TEST_SIGNING_KEY_ENCRYPTION_KEY } from './test-secrets.js';

/** The real CLI in a child process (built, or through tsx: see serviceEntry), its output collected. */
export interface CliProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the first output line matching, or rejects if the process ends first. */
  waitFor(pattern: RegExp): Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
}

const running = new Set<ChildProcess>();

/** Kills whatever a failed test left running, so the test file can end. */
export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}

export function runCli(args: string[], env: Record<string, string | undefined>): CliProcess {
  const child = spawn(process.execPath, [...nodeArgsFor(serviceEntry()), ...args], {
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'test',
      PASSWORD_HASH_COST: '1024',
      // Test machines run many processes on few cores: a server starved of CPU for a moment is
      // not overloaded by its own requests (see harness.ts). Overload tests set their own.
      MAX_EVENT_LOOP_DELAY: '0',
      // Processes over one PostgreSQL database open each other's signing keys, whatever their
      // DATA_DIR; on PGlite the key is generated into DATA_DIR, as on a first start.
      ...(env.DATABASE_URL ? { SIGNING_KEY_ENCRYPTION_KEY: TEST_SIGNING_KEY_ENCRYPTION_KEY } : {}),
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  child.on('exit', () => running.delete(child));
  let output = '';
  const waiters: { pattern: RegExp; resolve: (m: RegExpMatchArray) => void; reject: (e: Error) => void }[] =
    [];
  const check = () => {
    for (const waiter of [...waiters]) {
      const match = output.match(waiter.pattern);
      if (match) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(match);
      }
    }
  };
  child.stdout?.on('data', (chunk) => {
    output += chunk;
    check();
  });
  child.stderr?.on('data', (chunk) => {
    output += chunk;
    check();
  });
  const exited = new Promise<number | null>((resolve) => {
    child.on('exit', (code) => {
      for (const waiter of waiters.splice(0)) {
        waiter.reject(new Error(`process exited (${code}) before ${waiter.pattern}; output:\n${output}`));
      }
      resolve(code);
    });
  });
  return {
    child,
    output: () => output,
    exited,
    waitFor(pattern) {
      const match = output.match(pattern);
      if (match) return Promise.resolve(match);
      if (child.exitCode !== null)
        return Promise.reject(new Error(`process already exited; output:\n${output}`));
      return new Promise((resolve, reject) => waiters.push({ pattern, resolve, reject }));
    },
  };
}

/** Kills the process at once (kill -9), as a crash or the OOM killer would, and waits until it is gone. */
export async function crash(proc: CliProcess): Promise<void> {
  proc.child.kill('SIGKILL');
  await proc.exited;
}

/** Starts `serve` and returns the base urls it printed. */
export async function serve(env: Record<string, string | undefined>) {
  const proc = runCli(['serve'], { PORT: '0', PAY_PORT: '0', HOST: '127.0.0.1', ...env });
  const [line = '', coreUrl, payUrl] = await proc.waitFor(
    /core API on (\S+)\/v1\s+·\s+checkout host on (\S+).*/,
  );
  const health = /probes on (\S+)/.exec(line)?.[1] ?? null;
  return { proc, api: coreUrl as string, pay: payUrl as string, health };
}

/**
 * Storage for a test file of service processes: on PostgreSQL a database of its own (they run
 * background jobs), and fresh data folders; all of it, and any process left running, is removed
 * after the file. A fresh folder is empty, as a newcomer's first start finds it; a migrated one
 * already holds the embedded database with every migration applied, for the tests about
 * anything else (on PostgreSQL it is empty too, the database being shared).
 */
export async function processStorage() {
  const scratch = await scratchDatabase();
  const folders: string[] = [];
  after(async () => {
    killAll();
    await scratch.drop();
    for (const folder of folders) fs.rmSync(folder, { recursive: true, force: true });
  });
  return {
    DATABASE_URL: scratch.url,
    storage: scratch.url ? 'PostgreSQL' : 'PGlite',
    freshDataDir,
    async migratedDataDir(): Promise<string> {
      const folder = freshDataDir();
      if (!scratch.url) await fillWithMigratedDatabase(folder);
      return folder;
    },
  };

  function freshDataDir(): string {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-data-'));
    folders.push(folder);
    return folder;
  }
}
