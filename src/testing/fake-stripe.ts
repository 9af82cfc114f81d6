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
  customer: string | null;
  payment_method: string | null;
  setup_future_usage: string | null;
}

export interface FakeStripe {
  url: string;
  intents: Map<string, FakeIntent>;
  idempotencyKeys: Map<string, string>;
  customers: Map<string, { id: string; email: string | null }>;
  /** Payment methods detached from their customer; charging one fails. */
  detached: Set<string>;
  /** Payment methods whose off-session charges are declined. */
  declining: Set<string>;
  /** Succeeds the intent; one that keeps the card gets a payment method on its customer. */
  succeed(id: string): void;
  fail(id: string, message: string): void;
  close(): Promise<void>;
}

export async function startFakeStripe(): Promise<FakeStripe> {
  const intents = new Map<string, FakeIntent>();
  const idempotencyKeys = new Map<string, string>();
  const customers = new Map<string, { id: string; email: string | null }>();
  const detached = new Set<string>();
  const declining = new Set<string>();
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
      const key = String(req.headers['idempotency-key'] ?? '');
      const form = new URLSearchParams(body);
      if (req.method === 'POST' && url.pathname === '/v1/customers') {
        const existing = key ? idempotencyKeys.get(key) : undefined;
        if (existing) return send(200, { object: 'customer', ...customers.get(existing) });
        const customer = { id: `cus_${randomBytes(10).toString('hex')}`, email: form.get('email') };
        customers.set(customer.id, customer);
        if (key) idempotencyKeys.set(key, customer.id);
        return send(200, { object: 'customer', ...customer });
      }
      const detach = /^\/v1\/payment_methods\/([^/]+)\/detach$/.exec(url.pathname);
      if (req.method === 'POST' && detach) {
        detached.add(decodeURIComponent(detach[1] ?? ''));
        return send(200, { id: detach[1], object: 'payment_method', customer: null });
      }
      if (req.method === 'POST' && url.pathname === '/v1/payment_intents') {
        const existing = key ? idempotencyKeys.get(key) : undefined;
        if (existing) return send(200, intents.get(existing));
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
          customer: form.get('customer'),
          payment_method: form.get('payment_method'),
          setup_future_usage: form.get('setup_future_usage'),
        };
        intents.set(id, intent);
        if (key) idempotencyKeys.set(key, id);
        if (form.get('off_session') === 'true' && form.get('confirm') === 'true') {
          const method = intent.payment_method ?? '';
          if (detached.has(method) || declining.has(method)) {
            intent.last_payment_error = { message: 'Your card was declined.' };
            return send(402, {
              error: {
                type: 'card_error',
                code: 'card_declined',
                message: 'Your card was declined.',
                payment_intent: intent,
              },
            });
          }
          intent.status = 'succeeded';
        }
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
    customers,
    detached,
    declining,
    succeed: (id) =>
      update(id, {
        status: 'succeeded',
        last_payment_error: null,
        ...(intents.get(id)?.customer ? { payment_method: `pm_${randomBytes(10).toString('hex')}` } : {}),
      }),
    fail: (id, message) => update(id, { status: 'requires_payment_method', last_payment_error: { message } }),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
