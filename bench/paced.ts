import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import type { LoadInput, LoadResult } from './load.js';

/**
 * The fixed-rate load generator (P4), in a process of its own. autocannon's `overallRate` does not
 * pace: each connection sends back to back until it has used its allowance for the second, then
 * waits for the next second, so "half the maximum rate" is full load for half of every second.
 * This one is open-loop, as wrk2 is: request i is due at start + i / rate, sent on the first timer
 * tick at or after that moment over a pool of keep-alive connections, and its latency runs from
 * when it was due to the end of its answer. Lateness of the generator's own timers, and requests
 * waiting for a free connection, count against the subject (coordinated omission is not hidden).
 * Our own because autocannon, the generator of every other figure, has no paced mode, and a few
 * dozen lines over undici's pool cost less than another tool to install.
 *
 * The first LEAD_IN_SECONDS run at the same pace but are not recorded, as wrk2 calibrates before
 * it records: this process's own start (loading its modules, compiling its hot paths) takes most
 * of a core for about a second, and on two cores that would be measured as the subject's tail.
 * Input (argv[2], JSON): { url, bodies?, connections, seconds, overallRate, latencyFile? }.
 */
const input = JSON.parse(process.argv[2] as string) as LoadInput & { overallRate: number };
const bodies = input.bodies ? fs.readFileSync(input.bodies, 'utf8').split('\n').filter(Boolean) : [];
const url = new URL(input.url);
const pool = new Pool(url.origin, { connections: input.connections, pipelining: 1 });
const headers = { 'content-type': 'application/json' };

function request(index: number): Promise<number> {
  return pool
    .request(
      bodies.length
        ? { path: url.pathname, method: 'POST', headers, body: bodies[index % bodies.length] as string }
        : { path: url.pathname, method: 'GET' },
    )
    .then(async (res) => {
      await res.body.dump();
      return res.statusCode;
    });
}

// Open every connection before the clock starts, so no measured request pays for a handshake.
await Promise.all(Array.from({ length: input.connections }, (_, i) => request(i)));

const LEAD_IN_SECONDS = 2;
const leadIn = Math.floor(input.overallRate * LEAD_IN_SECONDS);
const total = leadIn + Math.max(1, Math.floor(input.overallRate * input.seconds));
const interval = 1000 / input.overallRate;
const latencies = new Float64Array(total);
let errors = 0;
let sent = 0;
let settled = 0;
const start = performance.now();
const finished = new Promise<void>((resolve) => {
  const send = (index: number) => {
    const due = start + index * interval;
    request(index)
      .then(
        (status) => {
          latencies[index] = performance.now() - due;
          if ((status < 200 || status >= 300) && index >= leadIn) errors++;
        },
        () => {
          latencies[index] = performance.now() - due;
          if (index >= leadIn) errors++;
        },
      )
      .finally(() => {
        if (++settled === total) resolve();
      });
  };
  const tick = () => {
    const dueNow = Math.min(total, Math.floor((performance.now() - start) / interval) + 1);
    while (sent < dueNow) send(sent++);
    if (sent < total) setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
  };
  tick();
});
await finished;
const elapsed = (performance.now() - start) / 1000 - LEAD_IN_SECONDS;
await pool.close();

const sorted = Array.from(latencies.subarray(leadIn)).sort((a, b) => a - b);
const at = (q: number) =>
  Math.round((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0) * 10) / 10;
const output: LoadResult = {
  requestsPerSecond: Math.round((total - leadIn) / elapsed),
  p50Ms: at(0.5),
  p90Ms: at(0.9),
  p99Ms: at(0.99),
  errors,
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
