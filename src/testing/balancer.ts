import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * HAProxy in front of service processes, run from a configuration file of the repository as
 * written (deploy/haproxy.cfg): what differs between deployments comes in as environment
 * variables, which HAProxy substitutes itself.
 */

/** Debian's haproxy (apt-get install haproxy puts it in /usr/sbin); null when it is not installed. */
export function haproxyBinary(): string | null {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), '/usr/sbin', '/usr/local/sbin'];
  for (const dir of dirs) {
    const file = path.join(dir, 'haproxy');
    if (dir && fs.existsSync(file)) return file;
  }
  return null;
}

/** One server of one backend, as HAProxy's stats report it. */
export interface ServerStats {
  backend: string;
  server: string;
  /** `UP`, `DOWN`, or a transition (`UP 1/2`: going down, `DOWN 1/2`: coming up). */
  status: string;
  /** Requests HAProxy sent to another attempt (`wretr`) and to another server (`wredis`). */
  retries: number;
  redispatches: number;
}

export interface Balancer {
  servers(): Promise<ServerStats[]>;
  /** HAProxy's own log (one line per request, `option httplog`) and messages. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts HAProxy in the foreground on `configFile` with `variables` in its environment, its
 * log to stdout (a `global` section of its own in a temporary folder, read first, as Debian's
 * /etc/haproxy/haproxy.cfg is in production), and waits until its stats page at `statsUrl` answers.
 */
export async function startHaproxy(
  binary: string,
  configFile: string,
  variables: Record<string, string>,
  statsUrl: string,
): Promise<Balancer> {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-haproxy-'));
  const logConfig = path.join(folder, 'log.cfg');
  fs.writeFileSync(logConfig, 'global\n    log stdout format raw local0 info\n');
  const child = spawn(binary, ['-db', '-f', logConfig, '-f', configFile], {
    env: { PATH: process.env.PATH, ...variables },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => {
    output += chunk;
  });
  child.stderr.on('data', (chunk) => {
    output += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const servers = async () =>
    parseStats(await (await fetch(`${statsUrl}/stats;csv`, { signal: AbortSignal.timeout(10_000) })).text());
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
    fs.rmSync(folder, { recursive: true, force: true });
  };
  for (let attempt = 0; ; attempt++) {
    if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}):\n${output}`);
    try {
      await servers();
      break;
    } catch (error) {
      if (attempt > 100) {
        await stop();
        throw new Error(`haproxy's stats never answered (${(error as Error).message}):\n${output}`);
      }
      await sleep(100);
    }
  }
  return { servers, output: () => output, stop };
}

/** The rows of `/stats;csv` that are servers (not a frontend's or backend's totals). */
function parseStats(csv: string): ServerStats[] {
  const [header = '', ...lines] = csv.trim().split('\n');
  const columns = header.replace(/^# /, '').split(',');
  const at = (fields: string[], name: string) => fields[columns.indexOf(name)] ?? '';
  return lines
    .map((line) => line.split(','))
    .filter((fields) => !['FRONTEND', 'BACKEND'].includes(at(fields, 'svname')))
    .map((fields) => ({
      backend: at(fields, 'pxname'),
      server: at(fields, 'svname'),
      status: at(fields, 'status'),
      retries: Number(at(fields, 'wretr') || 0),
      redispatches: Number(at(fields, 'wredis') || 0),
    }));
}

/** `NAME=value` lines of an environment file (systemd's EnvironmentFile=, docker --env-file). */
export function readEnvFile(file: string): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const match = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(line.trim());
    if (match?.[1] !== undefined) settings[match[1]] = match[2] ?? '';
  }
  return settings;
}
