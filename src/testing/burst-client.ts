import http from 'node:http';

/**
 * A burst of clients in a process of their own (burst.ts, bench/soak.ts): opens every connection at once,
 * each sending one request — a verify of an unknown key, or a `/healthz` probe every
 * `probeEvery`th — and prints one JSON line tallying how each ended.
 * Input (argv[2], JSON): BurstInput.
 */
export interface BurstInput {
  origin: string;
  connections: number;
  probeEvery: number;
  /** Per connection, from connect() to the last byte of the answer. */
  timeoutMs: number;
}

export interface BurstOutcome {
  /** Answers by kind and status, with the error code of an error body: `verify 503 overloaded`. */
  answers: Record<string, number>;
  /** Never connected: refused, reset or timed out while connecting. */
  connectFailures: number;
  /** Connected, then no answer within the timeout. */
  timeouts: number;
  /** Connected, then the connection failed before a whole answer. */
  otherFailures: number;
  /** The longest a connection took from its attempt to the last byte of its answer, in ms. */
  slowestMs: number;
  /** Answers that took more than a second (a dropped SYN is retried after one). */
  slowerThanOneSecond: number;
}

function send(input: BurstInput, i: number): Promise<{ end: string; ms: number }> {
  const probe = i % input.probeEvery === 0;
  const body = probe ? undefined : JSON.stringify({ key: `burst-${i}`, hwuid: 'burst-device' });
  const url = new URL(probe ? '/healthz' : '/v1/licenses/verify', input.origin);
  let started = performance.now();
  return new Promise((settle) => {
    const resolve = (end: string) => settle({ end, ms: performance.now() - started });
    let connected = false;
    const request = http.request(url, {
      method: probe ? 'GET' : 'POST',
      // A connection of its own each, as separate clients arrive.
      agent: false,
      headers: body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {},
    });
    const timer = setTimeout(() => {
      resolve(connected ? 'timeout' : 'connect');
      request.destroy();
    }, input.timeoutMs);
    request.on('socket', (socket) => {
      // From the connection attempt, not from this process's own setting up of the others.
      started = performance.now();
      socket.once('connect', () => (connected = true));
    });
    request.on('error', () => {
      clearTimeout(timer);
      resolve(connected ? 'other' : 'connect');
    });
    request.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => {
        clearTimeout(timer);
        let code = '';
        try {
          code = JSON.parse(text)?.error?.code ?? '';
        } catch {}
        resolve(`${probe ? 'probe' : 'verify'} ${response.statusCode}${code ? ` ${code}` : ''}`);
      });
    });
    request.end(body);
  });
}

const input = JSON.parse(process.argv[2] ?? '{}') as BurstInput;
const ends = await Promise.all(Array.from({ length: input.connections }, (_, i) => send(input, i)));
const outcome: BurstOutcome = {
  answers: {},
  connectFailures: 0,
  timeouts: 0,
  otherFailures: 0,
  slowestMs: 0,
  slowerThanOneSecond: 0,
};
for (const { end, ms } of ends) {
  if (end === 'connect') outcome.connectFailures++;
  else if (end === 'timeout') outcome.timeouts++;
  else if (end === 'other') outcome.otherFailures++;
  else {
    outcome.answers[end] = (outcome.answers[end] ?? 0) + 1;
    outcome.slowestMs = Math.max(outcome.slowestMs, Math.round(ms));
    if (ms > 1000) outcome.slowerThanOneSecond++;
  }
}
process.stdout.write(`${JSON.stringify(outcome)}\n`);
