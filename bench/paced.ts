import fs from 'node:fs';
import net from 'node:net';
import { performance } from 'node:perf_hooks';
import type { LoadInput, LoadResult } from './load.js';

/**
 * The fixed-rate load generator (P4), in a process of its own. autocannon's `overallRate` does not
 * pace: each connection sends back to back until it has used its allowance for the second, then
 * waits for the next second, so "half the maximum rate" is full load for half of every second.
 * This one is open-loop, as wrk2 is: request i is due at start + i / rate, sent on the first timer
 * tick at or after that moment over a pool of keep-alive connections, and its latency runs from
 * when it was due to the end of its answer. Lateness of the generator's own timers, and requests
 * waiting for a free connection, count against the subject (coordinated omission is not hidden).
 *
 * Our own because autocannon, the generator of every other figure, has no paced mode. It writes
 * HTTP/1.1 on plain sockets, every request encoded before the clock starts, and reads an answer
 * only as far as its status and its end, with no promise or object a request: at P4's rate this
 * process shares the two cores with the subject, and what it spends is not left to the subject.
 * (Over undici's pool it spent 137-149 µs of CPU a request, a fifth of a core at 1,500 a second.)
 *
 * The first LEAD_IN_SECONDS run at the same pace but are not recorded, as wrk2 calibrates before
 * it records: this process's own start (loading its modules, compiling its hot paths) takes most
 * of a core for about a second, and on two cores that would be measured as the subject's tail.
 * Input (argv[2], JSON): { url, bodies?, connections, seconds, overallRate, latencyFile? }.
 */
const input = JSON.parse(process.argv[2] as string) as LoadInput & { overallRate: number };
const bodies = input.bodies ? fs.readFileSync(input.bodies, 'utf8').split('\n').filter(Boolean) : [];
const url = new URL(input.url);
if (url.protocol !== 'http:') throw new Error(`paced load speaks plain HTTP only, not ${url.protocol}`);
const head = `${bodies.length ? 'POST' : 'GET'} ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\n`;
const encoded = bodies.length
  ? bodies.map((body) =>
      Buffer.from(
        `${head}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      ),
    )
  : [Buffer.from(`${head}\r\n`)];
const HEADER_END = Buffer.from('\r\n\r\n');
const LAST_CHUNK = Buffer.from('\r\n0\r\n\r\n');

type Answered = (index: number, status: number) => void;

/** One keep-alive connection carrying one request at a time; reopened if it breaks. */
class Connection {
  private socket!: net.Socket;
  private buffered: Buffer = Buffer.alloc(0);
  /** The request under way, if any (a negative index: one sent before the clock starts). */
  private index: number | null = null;

  constructor(private readonly answered: Answered) {
    this.open();
  }

  send(index: number): void {
    this.index = index;
    this.socket.write(encoded[Math.abs(index) % encoded.length] as Buffer);
  }

  close(): void {
    this.index = null;
    this.socket.removeAllListeners('close');
    this.socket.destroy();
  }

  private open(): void {
    const socket = net.connect({ host: url.hostname, port: Number(url.port || 80), noDelay: true });
    this.socket = socket;
    socket.on('data', (chunk: Buffer) => this.read(chunk));
    socket.on('error', () => {});
    socket.on('close', () => {
      this.buffered = Buffer.alloc(0);
      const index = this.index;
      this.open();
      // An answer lost with its connection counts as a failure (status 0), and the connection is
      // free again.
      if (index !== null) this.finish(0);
    });
  }

  /** An answer ends after its headers and Content-Length bytes, or at its last chunk. */
  private read(chunk: Buffer): void {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    const headerEnd = this.buffered.indexOf(HEADER_END);
    if (headerEnd < 0) return;
    const header = this.buffered.toString('latin1', 0, headerEnd);
    const length = /\r\ncontent-length: *(\d+)/i.exec(header);
    let end = headerEnd + 4;
    if (length) {
      end += Number(length[1]);
      if (this.buffered.length < end) return;
    } else if (/\r\ntransfer-encoding: *chunked/i.test(header)) {
      const last = this.buffered.indexOf(LAST_CHUNK, headerEnd);
      if (last < 0) return;
      end = last + LAST_CHUNK.length;
    }
    this.buffered = this.buffered.subarray(end);
    this.finish(Number(header.slice(9, 12)));
  }

  private finish(status: number): void {
    const index = this.index as number;
    this.index = null;
    this.answered(index, status);
  }
}

/** Connections and the requests waiting for one, oldest first. */
function pool(size: number, answered: Answered) {
  const free: Connection[] = [];
  const backlog: number[] = [];
  const connections: Connection[] = [];
  for (let i = 0; i < size; i++) {
    const connection: Connection = new Connection((index, status) => {
      answered(index, status);
      const next = backlog.shift();
      if (next === undefined) free.push(connection);
      else connection.send(next);
    });
    connections.push(connection);
    free.push(connection);
  }
  return {
    send(index: number): void {
      const connection = free.pop();
      if (connection) connection.send(index);
      else backlog.push(index);
    },
    close(): void {
      for (const connection of connections) connection.close();
    },
  };
}

/** A promise and its resolve (Promise.withResolvers is Node 22's). */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}

const LEAD_IN_SECONDS = 2;
const leadIn = Math.floor(input.overallRate * LEAD_IN_SECONDS);
const total = leadIn + Math.max(1, Math.floor(input.overallRate * input.seconds));
const interval = 1000 / input.overallRate;
const latencies = new Float64Array(total);
let errors = 0;
let settled = 0;
let start = 0;
let warm = 0;
const opened = deferred();
const finished = deferred();
const connections = pool(input.connections, (index, status) => {
  if (index < 0) {
    // One request a connection before the clock starts, so no measured one pays for a handshake.
    if (++warm === input.connections) opened.resolve();
    return;
  }
  latencies[index] = performance.now() - (start + index * interval);
  if ((status < 200 || status >= 300) && index >= leadIn) errors++;
  if (++settled === total) finished.resolve();
});
for (let i = 0; i < input.connections; i++) connections.send(-1 - i);
await opened.promise;
const cpuBefore = process.cpuUsage();
start = performance.now();
let sent = 0;
const tick = () => {
  const dueNow = Math.min(total, Math.floor((performance.now() - start) / interval) + 1);
  while (sent < dueNow) connections.send(sent++);
  if (sent < total) setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
};
tick();
await finished.promise;
const elapsed = (performance.now() - start) / 1000 - LEAD_IN_SECONDS;
const cpu = process.cpuUsage(cpuBefore);
connections.close();

const sorted = Array.from(latencies.subarray(leadIn)).sort((a, b) => a - b);
const at = (q: number) =>
  Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 10) / 10;
const output: LoadResult = {
  requestsPerSecond: Math.round((total - leadIn) / elapsed),
  p50Ms: at(0.5),
  p90Ms: at(0.9),
  p99Ms: at(0.99),
  errors,
  requests: total,
  cpuUsPerRequest: Math.round((cpu.user + cpu.system) / total),
};
console.log(JSON.stringify(output));
if (input.latencyFile) {
  const lines: string[] = [];
  for (let i = leadIn; i < total; i++) {
    lines.push(
      `${(performance.timeOrigin + start + i * interval).toFixed(1)} ${(latencies[i] ?? 0).toFixed(2)}`,
    );
  }
  fs.writeFileSync(input.latencyFile, `${lines.join('\n')}\n`);
}
