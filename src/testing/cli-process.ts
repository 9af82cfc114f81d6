import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after } from 'node:test';
import { freePorts } from './free-ports.js';
import { fillWithMigratedDatabase } from './memory-image.js';
import { scratchDatabase } from './scratch-database.js';
import { nodeArgsFor, serviceEntry } from './service-entry.js';
import { TEST_SIGNING_KEY_ENCRYPTION_KEY } from './test-secrets.js';

/** The real CLI in a child process (built, or through tsx: see serviceEntry), its output collected. */
export interface CliProcess {
  child: ChildProcess;
  /** Everything it wrote, stdout and stderr interleaved. */
  output(): string;
  /** What it wrote to stdout alone (its log). */
  stdout(): string;
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
  let stdout = '';
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
    stdout += chunk;
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
    stdout: () => stdout,
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

/**
 * Starts `serve` on free loopback ports (unless `env` places a listener itself) and returns its
 * base urls once the core API, the checkout host and the probe listener all answer. The service
 * prints no address a test could read (its log is JSON, and quiet at LOG_LEVEL=warn), so the
 * ports are chosen here; one another process took in between fails the start with "already in
 * use", and the start is tried again on new ports.
 */
export async function serve(env: Record<string, string | undefined>) {
  for (let attempt = 1; ; attempt++) {
    const [port, payPort, healthPort] = (await freePorts(3)) as [number, number, number];
    const settings: Record<string, string | undefined> = {
      PORT: String(port),
      PAY_PORT: String(payPort),
      HEALTH_PORT: String(healthPort),
      HOST: '127.0.0.1',
      // One issuer for every node and restart, as a deployment behind one public address has
      // (its default follows PORT, which differs from process to process here).
      LICENSE_TOKEN_ISSUER: 'http://licensing.test/v1',
      ...env,
    };
    const proc = runCli(['serve'], settings);
    // Where the process listens: HOST (the probe listener HEALTH_HOST, or HOST), a wildcard
    // address reached on loopback.
    const origin = (host: string | undefined, port: string | undefined) =>
      `http://${!host || host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host}:${port}`;
    const health =
      settings.HEALTH_PORT === 'off'
        ? null
        : origin(settings.HEALTH_HOST ?? settings.HOST, settings.HEALTH_PORT);
    const answering = [
      origin(settings.HOST, settings.PORT),
      origin(settings.HOST, settings.PAY_PORT),
      ...(health ? [health] : []),
    ];
    try {
      await untilAnswering(proc, answering);
      return {
        proc,
        api: origin(settings.HOST, settings.PORT),
        pay: origin(settings.HOST, settings.PAY_PORT),
        health,
      };
    } catch (error) {
      if (attempt < 3 && /already in use/.test(proc.output()) && !('PORT' in env)) continue;
      throw error;
    }
  }
}

/** A start that takes longer than this is a hang (the slowest seen, on a loaded machine, took 20 s). */
const START_DEADLINE_MS = 120_000;

/**
 * Resolves once `GET /healthz` answers at every origin; rejects if the process ends first, or
 * if an origin does not answer within START_DEADLINE_MS (the process is then killed).
 */
async function untilAnswering(proc: CliProcess, origins: string[]): Promise<void> {
  const deadline = Date.now() + START_DEADLINE_MS;
  for (const origin of origins) {
    for (;;) {
      if (proc.child.exitCode !== null || proc.child.signalCode !== null) {
        throw new Error(`serve ended (${proc.child.exitCode}) before answering; output:\n${proc.output()}`);
      }
      if (Date.now() > deadline) {
        proc.child.kill('SIGKILL');
        throw new Error(
          `serve did not answer at ${origin}/healthz within ${START_DEADLINE_MS} ms; output:\n${proc.output()}`,
        );
      }
      const answered = await fetch(`${origin}/healthz`, { signal: AbortSignal.timeout(5_000) }).then(
        () => true,
        () => false,
      );
      if (answered) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
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
