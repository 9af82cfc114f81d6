import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** A webhook receiver on loopback for tests: records every request and answers as told. */
export interface ReceivedRequest {
  /** The path after the receiver's base (`/flaky` for `${url}/flaky`). */
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  json: { id: string; type: string; data: Record<string, unknown>; timestamp: string; signature: string };
}

export type Answer =
  /**
   * `delayMs` holds the answer back, so a sender can be stopped while it waits; `heldUntil`
   * holds it until that promise settles.
   */
  | {
      status: number;
      body?: string;
      headers?: Record<string, string>;
      delayMs?: number;
      heldUntil?: Promise<unknown>;
    }
  | { hang: true }
  | { reset: true }
  | { hugeBody: number };

export interface Receiver {
  url: string;
  requests: ReceivedRequest[];
  /** How the next requests are answered (default 200). */
  answer(next: Answer | ((request: ReceivedRequest) => Answer)): void;
  /** Resolves once `count` requests have arrived. */
  waitFor(count: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  let answer: Answer | ((request: ReceivedRequest) => Answer) = { status: 200, body: 'ok' };
  const waiters: { count: number; resolve: () => void }[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    // A sender that dies mid-request (a killed process) resets the connection: nothing to answer.
    req.on('error', () => {});
    res.on('error', () => {});
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const received: ReceivedRequest = {
        path: (req.url ?? '').replace(/^\/hooks/, ''),
        headers: req.headers,
        body,
        json: JSON.parse(body || '{}'),
      };
      requests.push(received);
      for (const waiter of [...waiters]) {
        if (requests.length >= waiter.count) {
          waiters.splice(waiters.indexOf(waiter), 1);
          waiter.resolve();
        }
      }
      const next = typeof answer === 'function' ? answer(received) : answer;
      if ('hang' in next) {
        hanging.add(res);
        return;
      }
      if ('reset' in next) {
        req.socket.destroy();
        return;
      }
      if ('hugeBody' in next) {
        res.writeHead(200, { 'content-type': 'text/plain' });
        const chunk = Buffer.alloc(64 * 1024, 'x');
        let sent = 0;
        const write = () => {
          while (sent < next.hugeBody) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once('drain', write);
          }
          res.end();
        };
        res.on('close', () => {
          sent = next.hugeBody;
        });
        return write();
      }
      const respond = () => {
        res.writeHead(next.status, { 'content-type': 'text/plain', ...next.headers });
        res.end(next.body ?? '');
      };
      if (next.delayMs) setTimeout(respond, next.delayMs);
      else if (next.heldUntil) next.heldUntil.then(respond, respond);
      else respond();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    requests,
    answer(next) {
      answer = next;
    },
    waitFor(count) {
      if (requests.length >= count) return Promise.resolve(requests);
      return new Promise((resolve) => waiters.push({ count, resolve: () => resolve(requests) }));
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
