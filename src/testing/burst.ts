import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BurstInput, BurstOutcome } from './burst-client.js';
import type { ProbeAnswer, ProbeClientInput } from './probe-client.js';
import { nodeArgsFor } from './service-entry.js';

/**
 * A burst of connections against a listener in this process, with the kernel's side of it in
 * view: while this process's event loop is held, its listeners accept nothing (as a node busy
 * with a burst), so what arrives waits in the listen queue or, once that is full, is dropped.
 */

/** Starts the clients in a process of their own; resolves with how each connection ended. */
export function startBurst(input: BurstInput): { outcome: Promise<BurstOutcome>; stop(): void } {
  const child = spawn(process.execPath, [...nodeArgsFor(besideThis('burst-client')), JSON.stringify(input)], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  const outcome = new Promise<BurstOutcome>((resolve, reject) => {
    child.on('exit', (code) => {
      if (code === 0) resolve(JSON.parse(output.trim().split('\n').at(-1) ?? '') as BurstOutcome);
      else reject(new Error(`the burst's clients exited (${code}):\n${output}`));
    });
  });
  return {
    outcome,
    stop() {
      outcome.catch(() => {});
      child.kill('SIGKILL');
    },
  };
}

export interface ListenQueue {
  /** Connections the kernel has completed and holds for the listener to accept. */
  waiting: number;
  /** Client sockets to the port that are connected. */
  connected: number;
  /** Client sockets to the port still waiting for the handshake (their SYN dropped, say). */
  connecting: number;
}

/** The IPv4 listener on `port` and the clients reaching it, from /proc/net/tcp (Linux only). */
export function listenQueue(port: number): ListenQueue {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const queue: ListenQueue = { waiting: 0, connected: 0, connecting: 0 };
  for (const line of fs.readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    // sl local_address rem_address st tx_queue:rx_queue …; a listener's rx_queue is its backlog.
    const [, local, remote, state, queues] = line.trim().split(/\s+/);
    if (!local || !remote || !queues) continue;
    if (state === '0A' && local.endsWith(`:${hexPort}`)) {
      queue.waiting = Number.parseInt(queues.split(':')[1] ?? '0', 16);
    } else if (remote.endsWith(`:${hexPort}`)) {
      if (state === '01') queue.connected++;
      else if (state === '02') queue.connecting++;
    }
  }
  return queue;
}

/**
 * Blocks this process's event loop (its listeners accept nothing meanwhile) until `done` holds,
 * looking every few milliseconds; false if `ms` pass first.
 */
export function holdEventLoop(done: () => boolean, ms: number): boolean {
  const nap = new Int32Array(new SharedArrayBuffer(4));
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) return false;
    Atomics.wait(nap, 0, 0, 5);
  }
  return true;
}

/**
 * Probes `url` from a process of its own while this process's event loop is held (spawnSync
 * blocks it, so nothing of this thread runs until the probes are done); resolves with each answer.
 */
export function probeWhileHeld(input: ProbeClientInput): ProbeAnswer[] {
  const run = spawnSync(
    process.execPath,
    [...nodeArgsFor(besideThis('probe-client')), JSON.stringify(input)],
    {
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      encoding: 'utf8',
      timeout: input.timeoutMs + 30_000,
    },
  );
  if (run.status !== 0) throw new Error(`the probes exited (${run.status}):\n${run.stdout}${run.stderr}`);
  return JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '') as ProbeAnswer[];
}

/** A client beside this file, as this file runs: a .ts source through tsx, or the suite's compiled .js. */
function besideThis(name: string): string {
  const here = fileURLToPath(import.meta.url);
  return path.join(path.dirname(here), `${name}${path.extname(here)}`);
}
