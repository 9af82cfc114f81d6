import fs from 'node:fs';
import autocannon from 'autocannon';

/**
 * The load generator, in a process of its own: autocannon against one URL, POSTing the bodies of
 * a file (one JSON body a line) round-robin, so traffic spreads over many licenses as real
 * clients' does. Prints one JSON line: throughput, latency and failures.
 * Input (argv[2], JSON): { url, bodies?, connections, seconds, overallRate? }.
 */
export interface LoadInput {
  url: string;
  /** A file with one request body a line; without it, GET requests. */
  bodies?: string;
  connections: number;
  seconds: number;
  /** A fixed rate (requests a second over all connections) instead of as many as answered. */
  overallRate?: number;
  /**
   * Paced only: a file to write every recorded request to, one a line: when it was due (ms since
   * the epoch, so it lines up with the subject's own clock) and its latency in ms. For finding
   * what the slow answers of a run have in common.
   */
  latencyFile?: string;
}

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  /** Connection errors, timeouts and non-2xx answers. */
  errors: number;
  /** Requests answered in all. */
  requests?: number;
  /**
   * This process's own CPU a request, every thread, in µs: on a machine whose cores it shares
   * with the service, what each request costs the generator is not left to the service.
   */
  cpuUsPerRequest?: number;
}

const input = JSON.parse(process.argv[2] as string) as LoadInput;
const bodies = input.bodies ? fs.readFileSync(input.bodies, 'utf8').split('\n').filter(Boolean) : [];
let next = 0;
const cpuBefore = process.cpuUsage();
const result = await autocannon({
  url: input.url,
  connections: input.connections,
  duration: input.seconds,
  ...(input.overallRate ? { overallRate: input.overallRate } : {}),
  requests: [
    bodies.length
      ? {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          setupRequest: (request) => ({ ...request, body: bodies[next++ % bodies.length] }),
        }
      : { method: 'GET' },
  ],
});
const cpu = process.cpuUsage(cpuBefore);
const output: LoadResult = {
  requestsPerSecond: Math.round(result.requests.average),
  p50Ms: result.latency.p50,
  p90Ms: result.latency.p90,
  p99Ms: result.latency.p99,
  // autocannon's `errors` already counts the timeouts among them.
  errors: result.errors + result.non2xx,
  requests: result.requests.total,
  cpuUsPerRequest: Math.round((cpu.user + cpu.system) / Math.max(1, result.requests.total)),
};
console.log(JSON.stringify(output));
