import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for the crypto partner (Coinbase Commerce's charges API): creates and serves
 * charges (with API key and idempotency keys), shows a hosted page where the buyer pays or
 * cancels, and sends signed callbacks as the partner would. Tests settle charges through the
 * page (as a buyer) or with confirm/fail/expire (as the blockchain would).
 */
export interface FakeCryptoCharge {
  id: string;
  code: string;
  name: string;
  description: string;
  hosted_url: string;
  pricing_type: 'fixed_price';
  pricing: { local: { amount: string; currency: string } };
  metadata: Record<string, string>;
  redirect_url: string | null;
  cancel_url: string | null;
  created_at: string;
  timeline: { time: string; status: string; context?: string }[];
}

/** A signed callback the fake made; `statusCode` is the receiver's answer (null: not sent or no answer). */
export interface FakeCryptoDelivery {
  url: string | null;
  type: string;
  body: string;
  signature: string;
  statusCode: number | null;
}

export interface FakeCrypto {
  url: string;
  /** Where callbacks are POSTed; may be set after start. Null: they are signed and recorded only. */
  callbackUrl: string | null;
  charges: Map<string, FakeCryptoCharge>;
  idempotencyKeys: Map<string, string>;
  deliveries: FakeCryptoDelivery[];
  /** The payment settles: COMPLETED, and a `charge:confirmed` callback. */
  confirm(chargeId: string): Promise<FakeCryptoDelivery>;
  /** The buyer underpays: UNRESOLVED, and a `charge:failed` callback. */
  fail(chargeId: string): Promise<FakeCryptoDelivery>;
  /** Nobody pays in time: EXPIRED, and a `charge:failed` callback. */
  expire(chargeId: string): Promise<FakeCryptoDelivery>;
  close(): Promise<void>;
}

export const FAKE_CRYPTO_API_VERSION = '2018-03-22';
const OPEN_STATUSES: readonly string[] = ['NEW', 'SIGNED', 'PENDING'];

export async function startFakeCrypto(options: {
  apiKey: string;
  webhookSecret: string;
  callbackUrl?: string;
}): Promise<FakeCrypto> {
  const charges = new Map<string, FakeCryptoCharge>();
  const idempotencyKeys = new Map<string, string>();
  const deliveries: FakeCryptoDelivery[] = [];

  const settle = async (
    chargeId: string,
    entry: { status: string; context?: string },
    type: string,
  ): Promise<FakeCryptoDelivery> => {
    const charge = charges.get(chargeId);
    if (!charge) throw new Error(`fake crypto: no charge ${chargeId}`);
    const current = charge.timeline.at(-1)?.status ?? 'NEW';
    if (!OPEN_STATUSES.includes(current)) throw new Error(`fake crypto: charge ${chargeId} is ${current}`);
    charge.timeline.push({ time: new Date().toISOString(), ...entry });
    return deliver(type, charge);
  };

  const deliver = async (type: string, charge: FakeCryptoCharge): Promise<FakeCryptoDelivery> => {
    const now = new Date().toISOString();
    const body = JSON.stringify({
      id: randomUUID(),
      scheduled_for: now,
      attempt_number: 1,
      event: {
        id: randomUUID(),
        resource: 'event',
        type,
        api_version: FAKE_CRYPTO_API_VERSION,
        created_at: now,
        data: charge,
      },
    });
    const signature = createHmac('sha256', options.webhookSecret).update(body).digest('hex');
    const delivery: FakeCryptoDelivery = { url: fake.callbackUrl, type, body, signature, statusCode: null };
    deliveries.push(delivery);
    if (delivery.url) {
      try {
        const res = await fetch(delivery.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-cc-webhook-signature': signature },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        await res.arrayBuffer();
        delivery.statusCode = res.status;
      } catch {
        // Like the partner, a receiver that does not answer only leaves statusCode null.
      }
    }
    return delivery;
  };

  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      void handle(req, res, body).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
        res.end(String(error));
      });
    });
  });

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, body: string): Promise<void> {
    const send = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };
    const fail = (status: number, type: string, message: string) =>
      send(status, { error: { type, message } });
    const page = (status: number, html: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' });
      res.end(html);
    };
    const redirect = (location: string | null) => {
      if (!location) return page(200, layout('Done', '<p>You may close this page.</p>'));
      res.writeHead(303, { location });
      res.end();
    };
    const path = new URL(req.url ?? '/', 'http://fake').pathname;

    // The hosted page is the buyer's browser: no API key.
    const pay = /^\/pay\/([^/]+)(?:\/(pay|cancel))?$/.exec(path);
    if (pay) {
      const charge = charges.get(decodeURIComponent(pay[1] ?? ''));
      if (!charge) return page(404, layout('Not found', '<p>No such charge.</p>'));
      const status = charge.timeline.at(-1)?.status ?? 'NEW';
      if (req.method === 'GET' && !pay[2]) return page(200, hostedPage(charge, status));
      if (req.method === 'POST' && pay[2] === 'cancel') return redirect(charge.cancel_url);
      if (req.method === 'POST' && pay[2] === 'pay') {
        if (!OPEN_STATUSES.includes(status)) {
          return page(409, layout('Closed', `<p>This charge is ${escapeHtml(status)}.</p>`));
        }
        await settle(charge.id, { status: 'COMPLETED' }, 'charge:confirmed');
        return redirect(charge.redirect_url);
      }
      return page(405, layout('Not allowed', '<p>Method not allowed.</p>'));
    }

    if (req.headers['x-cc-api-key'] !== options.apiKey) {
      return fail(401, 'authorization_error', 'No such API key.');
    }
    if (req.headers['x-cc-version'] !== FAKE_CRYPTO_API_VERSION) {
      return fail(400, 'invalid_request', `X-CC-Version must be ${FAKE_CRYPTO_API_VERSION}`);
    }
    if (req.method === 'POST' && path === '/charges') {
      const key = String(req.headers['idempotency-key'] ?? '');
      const existing = key ? idempotencyKeys.get(key) : undefined;
      if (existing) return send(201, { data: charges.get(existing) });
      let input: ChargeInput;
      try {
        input = JSON.parse(body) as ChargeInput;
      } catch {
        return fail(400, 'invalid_request', 'Body is not JSON');
      }
      const problem = invalidCharge(input);
      if (problem) return fail(400, 'invalid_request', problem);
      const id = randomUUID();
      const charge: FakeCryptoCharge = {
        id,
        code: randomBytes(4).toString('hex').toUpperCase(),
        name: input.name,
        description: input.description ?? '',
        hosted_url: `${fake.url}/pay/${id}`,
        pricing_type: 'fixed_price',
        pricing: { local: { amount: input.local_price.amount, currency: input.local_price.currency } },
        metadata: Object.fromEntries(Object.entries(input.metadata ?? {}).map(([k, v]) => [k, String(v)])),
        redirect_url: input.redirect_url ?? null,
        cancel_url: input.cancel_url ?? null,
        created_at: new Date().toISOString(),
        timeline: [{ time: new Date().toISOString(), status: 'NEW' }],
      };
      charges.set(id, charge);
      if (key) idempotencyKeys.set(key, id);
      return send(201, { data: charge });
    }
    const match = /^\/charges\/([^/]+)$/.exec(path);
    if (req.method === 'GET' && match) {
      const wanted = decodeURIComponent(match[1] ?? '');
      const charge = charges.get(wanted) ?? [...charges.values()].find((c) => c.code === wanted);
      return charge ? send(200, { data: charge }) : fail(404, 'not_found', 'Not found');
    }
    fail(404, 'not_found', `No route ${req.method} ${path}`);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const fake: FakeCrypto = {
    url: `http://127.0.0.1:${port}`,
    callbackUrl: options.callbackUrl ?? null,
    charges,
    idempotencyKeys,
    deliveries,
    confirm: (id) => settle(id, { status: 'COMPLETED' }, 'charge:confirmed'),
    fail: (id) => settle(id, { status: 'UNRESOLVED', context: 'UNDERPAID' }, 'charge:failed'),
    expire: (id) => settle(id, { status: 'EXPIRED' }, 'charge:failed'),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
  return fake;
}

interface ChargeInput {
  name: string;
  description?: string;
  pricing_type: string;
  local_price: { amount: string; currency: string };
  metadata?: Record<string, unknown>;
  redirect_url?: string;
  cancel_url?: string;
}

function invalidCharge(input: ChargeInput): string | null {
  if (typeof input?.name !== 'string' || input.name === '') return 'name is required';
  if (input.pricing_type !== 'fixed_price') return 'pricing_type must be fixed_price';
  const amount = input.local_price?.amount;
  if (typeof amount !== 'string' || !/^\d+(\.\d+)?$/.test(amount)) {
    return 'local_price.amount must be a decimal string';
  }
  if (typeof input.local_price.currency !== 'string' || !/^[A-Z]{3,5}$/.test(input.local_price.currency)) {
    return 'local_price.currency is invalid';
  }
  return null;
}

function hostedPage(charge: FakeCryptoCharge, status: string): string {
  const { amount, currency } = charge.pricing.local;
  const open = OPEN_STATUSES.includes(status);
  return layout(
    charge.name,
    `<h1>${escapeHtml(charge.name)}</h1>
<p>${escapeHtml(charge.description)}</p>
<p>Amount: <strong data-amount>${escapeHtml(amount)} ${escapeHtml(currency)}</strong></p>
<p>Status: <span data-status>${escapeHtml(status)}</span></p>
${
  open
    ? `<form method="post" action="/pay/${charge.id}/pay"><button type="submit">Pay</button></form>
<form method="post" action="/pay/${charge.id}/cancel"><button type="submit">Cancel</button></form>`
    : ''
}`,
  );
}

function layout(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body>
${body}
</body></html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );
}
