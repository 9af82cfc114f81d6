import http from 'node:http';

/**
 * A health probe in a process of its own, as a load balancer's: one GET every `everyMs` for
 * `seconds`, each on a fresh connection (so each goes through the listen queue, as a probe's
 * does), given up after `timeoutMs`. Prints one JSON line: every probe's start and duration.
 * Input (argv[2], JSON): ProbeInput.
 */
export interface ProbeInput {
  url: string;
  seconds: number;
  everyMs: number;
  timeoutMs: number;
}

export interface ProbeResult {
  /** Per probe: when it started (ms since the epoch), how long it took (ms), its status (0: no answer). */
  probes: { at: number; ms: number; status: number }[];
}

function probe(url: string, timeoutMs: number): Promise<{ at: number; ms: number; status: number }> {
  const at = Date.now();
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (status: number) => resolve({ at, ms: performance.now() - started, status });
    const request = http.get(url, { agent: false, timeout: timeoutMs }, (response) => {
      response.resume();
      response.on('end', () => done(response.statusCode ?? 0));
      response.on('error', () => done(0));
    });
    request.on('timeout', () => request.destroy(new Error('timed out')));
    request.on('error', () => done(0));
  });
}

const input = JSON.parse(process.argv[2] as string) as ProbeInput;
const until = Date.now() + input.seconds * 1000;
const pending: Promise<ProbeResult['probes'][number]>[] = [];
// Probes overlap when one is slow, as a balancer's do: the schedule does not wait for answers.
while (Date.now() < until) {
  pending.push(probe(input.url, input.timeoutMs));
  await new Promise((resolve) => setTimeout(resolve, input.everyMs));
}
const result: ProbeResult = { probes: await Promise.all(pending) };
console.log(JSON.stringify(result));
