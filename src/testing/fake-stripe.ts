import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for the card partner's HTTP API, enough for the official SDK to create and read
 * payment intents (with idempotency keys), and for tests to settle them as the partner would.
 */
export interface FakeIntent {
  id: string;
  object: 'payment_intent';
  amount: number;
  currency: string;
  status: string;
  client_secret: string;
  receipt_email: string | null;
  metadata: Record<string, string>;
  last_payment_error: { message: string } | null;
}

export interface FakeStripe {
  url: string;
  intents: Map<string, FakeIntent>;
  idempotencyKeys: Map<string, string>;
  succeed(id: string): void;
  fail(id: string, message: string): void;
  close(): Promise<void>;
}

export async function startFakeStripe(): Promise<FakeStripe> {
  const intents = new Map<string, FakeIntent>();
  const idempotencyKeys = new Map<string, string>();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const send = (status: number, payload: unknown) => {
        res.writeHead(status, {
          'content-type': 'application/json',
          'request-id': `req_${randomBytes(6).toString('hex')}`,
        });
        res.end(JSON.stringify(payload));
      };
      const url = new URL(req.url ?? '/', 'http://fake');
      if (req.method === 'POST' && url.pathname === '/v1/payment_intents') {
        const key = String(req.headers['idempotency-key'] ?? '');
        const existing = key ? idempotencyKeys.get(key) : undefined;
        if (existing) return send(200, intents.get(existing));
        const form = new URLSearchParams(body);
        const id = `pi_${randomBytes(12).toString('hex')}`;
        const intent: FakeIntent = {
          id,
          object: 'payment_intent',
          amount: Number(form.get('amount')),
          currency: String(form.get('currency')),
          status: 'requires_payment_method',
          client_secret: `${id}_secret_${randomBytes(8).toString('hex')}`,
          receipt_email: form.get('receipt_email'),
          metadata: Object.fromEntries(
            [...form.entries()]
              .filter(([k]) => k.startsWith('metadata['))
              .map(([k, v]) => [k.slice(9, -1), v]),
          ),
          last_payment_error: null,
        };
        intents.set(id, intent);
        if (key) idempotencyKeys.set(key, id);
        return send(200, intent);
      }
      const match = /^\/v1\/payment_intents\/([^/]+)$/.exec(url.pathname);
      if (req.method === 'GET' && match) {
        const intent = intents.get(decodeURIComponent(match[1] ?? ''));
        return intent
          ? send(200, intent)
          : send(404, { error: { type: 'invalid_request_error', message: 'No such payment_intent' } });
      }
      send(404, {
        error: {
          type: 'invalid_request_error',
          message: `Unrecognized request URL (${req.method} ${url.pathname})`,
        },
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const update = (id: string, changes: Partial<FakeIntent>) => {
    const intent = intents.get(id);
    if (!intent) throw new Error(`no intent ${id}`);
    Object.assign(intent, changes);
  };
  return {
    url: `http://127.0.0.1:${port}`,
    intents,
    idempotencyKeys,
    succeed: (id) => update(id, { status: 'succeeded', last_payment_error: null }),
    fail: (id, message) => update(id, { status: 'requires_payment_method', last_payment_error: { message } }),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
