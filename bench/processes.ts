import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serviceEntry } from '../src/testing/service-entry.js';

/**
 * Every party of a benchmark runs as its own process: the service (as `npm start` runs it), each
 * baseline and the load generator. Output goes to a file, never through this process, so the
 * orchestrator does no work while something is measured.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface Running {
  /** The first match of the ready pattern in the process's output. */
  ready: RegExpMatchArray;
  /** Wall-clock time (ms) the ready line was seen. */
  readyAt: number;
  pid: number;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Starts `node [--import tsx] script args…` and waits for a line matching `ready`. */
export async function start(
  script: string,
  args: string[],
  env: Record<string, string | undefined>,
  ready: RegExp,
  logFile: string,
  nodeArgs: string[] = [],
): Promise<Running> {
  // A restarted process appends to its log: only what it writes from now on counts.
  const from = fs.existsSync(logFile) ? fs.statSync(logFile).size : 0;
  const out = fs.openSync(logFile, 'a');
  const loader = script.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const child = spawn(process.execPath, [...nodeArgs, ...loader, path.resolve(ROOT, script), ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  running.add(child);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      running.delete(child);
      resolve();
    }),
  );
  const deadline = Date.now() + 120_000;
  for (;;) {
    const match = readFrom(logFile, from).match(ready);
    if (match) {
      return {
        ready: match,
        readyAt: Date.now(),
        pid: child.pid as number,
        async stop() {
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
          await exited;
          clearTimeout(timer);
        },
      };
    }
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`${script} did not start; its output (${logFile}):\n${tail(logFile)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Runs a script to its end and parses the JSON it prints last on stdout. A script that has not
 * ended a minute after its `seconds` is killed and run once more: a child started with
 * `--import tsx` on Node 20 has been seen, rarely, to hang for good before running a line (its
 * main thread waiting on the module-loader thread), and one stuck baseline would otherwise
 * hold the whole bench.
 */
export async function runJson<T>(
  script: string,
  input: unknown,
  env: Record<string, string | undefined> = {},
): Promise<T> {
  const seconds = (input as { seconds?: number } | null)?.seconds ?? 10;
  const limitMs = seconds * 1000 + 60_000;
  try {
    return await runJsonOnce<T>(script, input, env, limitMs);
  } catch (error) {
    if (!(error instanceof Stuck)) throw error;
    console.error(`bench: killed and running again: ${error.message}`);
    return runJsonOnce<T>(script, input, env, limitMs);
  }
}

class Stuck extends Error {}

function runJsonOnce<T>(
  script: string,
  input: unknown,
  env: Record<string, string | undefined>,
  limitMs: number,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', path.resolve(ROOT, script), JSON.stringify(input)],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    running.add(child);
    let stuck = false;
    const timer = setTimeout(() => {
      stuck = true;
      child.kill('SIGKILL');
    }, limitMs);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    // 'close', not 'exit': the last of its output may still be in the pipe when it exits.
    child.once('close', (code) => {
      running.delete(child);
      clearTimeout(timer);
      const last = stdout.trim().split('\n').at(-1) ?? '';
      if (code === 0 && last.startsWith('{')) resolve(JSON.parse(last) as T);
      else if (stuck) {
        const said = (stderr || stdout).trim().split('\n').slice(-5).join('\n');
        reject(
          new Stuck(
            `${script} had not ended after ${limitMs / 1000} s${said ? `; its last output:\n${said}` : ''}`,
          ),
        );
      } else reject(new Error(`${script} failed (${code}):\n${stderr || stdout}`));
    });
  });
}

function readFrom(file: string, offset: number): string {
  const fd = fs.openSync(file, 'r');
  try {
    const buffer = Buffer.alloc(Math.max(0, fs.fstatSync(fd).size - offset));
    fs.readSync(fd, buffer, 0, buffer.length, offset);
    return buffer.toString('utf8');
  } finally {
    fs.closeSync(fd);
  }
}

function tail(file: string): string {
  return fs.readFileSync(file, 'utf8').split('\n').slice(-30).join('\n');
}

/**
 * The service as production runs it: NODE_ENV=production (its LOG_LEVEL, info, one line per
 * request, written to a file), a JWT and an idempotency secret and a signing-key encryption key,
 * loopback ports chosen by the system. Rate limits are raised to their maximum, and event-loop shedding is off
 * (MAX_EVENT_LOOP_DELAY=0) so a saturated node is measured rather than its 503s.
 */
export const SERVICE_ENV = {
  NODE_ENV: 'production',
  JWT_SECRET: 'bench-session-secret-of-at-least-32-characters',
  IDEMPOTENCY_SECRET: 'bench-idempotency-secret-of-at-least-32-characters',
  SIGNING_KEY_ENCRYPTION_KEY: Buffer.alloc(32, 'bench-signing-key-encryption-key').toString('base64'),
  HOST: '127.0.0.1',
  PORT: '0',
  PAY_PORT: '0',
  VERIFY_RATE_LIMIT: '1000000',
  VERIFY_KEY_RATE_LIMIT: '1000000',
  MAX_EVENT_LOOP_DELAY: '0',
  // Metrics are recorded as in production, on a port of each service's own; so are probes.
  METRICS_PORT: '0',
  HEALTH_PORT: '0',
} as const;

export async function startService(
  storage: { env: Record<string, string>; dir: string },
  env: Record<string, string>,
  nodeArgs: string[] = [],
): Promise<Running & { api: string }> {
  const node = await start(
    serviceEntry(),
    ['serve'],
    { ...SERVICE_ENV, ...storage.env, ...env },
    // Its log's start line (the human banner is for terminals only).
    /"coreUrl":"([^"]+)"[^\n]*"msg":"server\.started"/,
    path.join(storage.dir, 'service.log'),
    nodeArgs,
  );
  return { ...node, api: `${node.ready[1]}/v1` };
}

/** Starts a baseline script of bench/baselines and returns its URL. */
export async function startBaseline(
  name: string,
  env: Record<string, string>,
  logDir: string,
): Promise<Running & { url: string }> {
  const node = await start(
    `bench/baselines/${name}.ts`,
    [],
    env,
    /listening on (\S+)/,
    path.join(logDir, `${name}.log`),
  );
  return { ...node, url: node.ready[1] as string };
}
