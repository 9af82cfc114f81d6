import assert from 'node:assert/strict';
import { randomInt, randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { type RouteInfo, registeredRoutes } from '../platform/http/create-http-app.js';
import {
  type SellerWithApp,
  sellerWithApp,
  startTestServer,
  type TestServer,
  uniqueSuffix,
} from '../testing/harness.js';
import { assertError, type HttpResponse, httpClient, type RequestOptions } from '../testing/http-client.js';

/**
 * The HTTP conventions (docs/api-conventions.md) over every route of both hosts, read from their
 * route catalogues so a new route is held to them without an edit here: a method a path does not
 * take answers 405 with `Allow`; every 401 names its challenge in `WWW-Authenticate`; every 201
 * says in `Location` where what it created is read (a new 201 route fails until it has a happy
 * path in CREATES); every answer of a limited route carries `RateLimit` and `RateLimit-Policy`.
 */

type Host = 'core' | 'pay';
interface Route {
  host: Host;
  route: RouteInfo;
}

let server: TestServer;
let seller: SellerWithApp;
const routes: Route[] = [];

before(async () => {
  server = await startTestServer();
  seller = await sellerWithApp(server);
  for (const route of registeredRoutes(server.service.core)) routes.push({ host: 'core', route });
  for (const route of registeredRoutes(server.service.pay)) routes.push({ host: 'pay', route });
});
after(() => server.stop());

const nameOf = ({ host, route }: Route) => `${host} ${route.method} ${route.url}`;
const client = (host: Host) => httpClient(host === 'core' ? server.service.coreUrl : server.service.payUrl);
const call = (host: Host, method: string, path: string, body?: unknown, options?: RequestOptions) =>
  client(host).request(method, path, body, options);
/** A path the route answers, its parameters filled with ids nothing has. */
const somePath = (url: string) => url.replace(/:[A-Za-z]+/g, () => randomUUID());

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

describe('a method the path does not take', () => {
  test('answers 405 method_not_allowed with Allow listing what the path takes, before any credential check', async () => {
    const byPath = new Map<string, { host: Host; url: string; methods: Set<string> }>();
    for (const { host, route } of routes) {
      const key = `${host} ${route.url}`;
      const entry = byPath.get(key) ?? { host, url: route.url, methods: new Set<string>() };
      entry.methods.add(route.method);
      // Fastify answers HEAD wherever it answers GET.
      if (route.method === 'GET') entry.methods.add('HEAD');
      byPath.set(key, entry);
    }
    assert.ok(byPath.size > 80, `${byPath.size} paths`);
    for (const { host, url, methods } of byPath.values()) {
      const expected = METHODS.filter((method) => methods.has(method)).join(', ');
      const wrong = ['DELETE', 'PUT', 'PATCH', 'POST', 'GET'].find((method) => !methods.has(method));
      assert.ok(wrong, `${host} ${url} takes every method`);
      const res = await call(host, wrong, somePath(url));
      const error = assertError(res, 405, 'method_not_allowed');
      assert.equal(res.headers.get('allow'), expected, `${host} ${wrong} ${url}`);
      assert.ok(error.message.includes(expected), error.message);
    }
  });

  test('a path no route has still answers 404 route_not_found, without Allow', async () => {
    for (const host of ['core', 'pay'] as const) {
      const res = await call(host, 'DELETE', '/v1/no/such/route');
      assertError(res, 404, 'route_not_found');
      assert.equal(res.headers.get('allow'), null);
    }
  });

  test('the issue’s own case: DELETE /v1/auth/me answers 405 with Allow: GET, HEAD', async () => {
    const res = await server.api.delete('/auth/me', { token: seller.token });
    assertError(res, 405, 'method_not_allowed');
    assert.equal(res.headers.get('allow'), 'GET, HEAD');
    (await server.api.get('/auth/me', { token: seller.token })).expect(200);
  });

  test('every cross-origin preflight still answers 204 with its CORS headers', async () => {
    const preflights = routes.filter(({ route }) => route.method === 'OPTIONS');
    assert.ok(preflights.length >= 8);
    for (const { host, route } of preflights) {
      const res = await call(host, 'OPTIONS', route.url, undefined, {
        headers: { origin: 'https://app.example.com', 'access-control-request-method': 'POST' },
      });
      assert.equal(res.status, 204, `${host} OPTIONS ${route.url}`);
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
    }
  });
});

describe('every 401 names its challenge in WWW-Authenticate', () => {
  test('a bearer-protected route, without credentials and with a refused token (RFC 6750)', async () => {
    const protectedRoutes = routes.filter(({ route }) => route.auth !== 'public');
    assert.ok(protectedRoutes.length > 50);
    for (const { host, route } of protectedRoutes) {
      const path = somePath(route.url);
      const none = await call(host, route.method, path);
      assertError(none, 401, 'unauthorized');
      assert.equal(none.headers.get('www-authenticate'), 'Bearer realm="licensing"', `${route.url}`);
      const refused = await call(host, route.method, path, undefined, { token: `sk_${'0'.repeat(48)}` });
      assertError(refused, 401, 'unauthorized');
      assert.match(
        refused.headers.get('www-authenticate') ?? '',
        /^Bearer realm="licensing", error="invalid_token"/,
        `${route.url}`,
      );
    }
  });

  const PORTAL_CHALLENGE = /^Cookie realm="portal", form-action="\/portal", cookie-name="portal_session"$/;
  const portalForm = (url: string) => () =>
    server.pay.post(somePath(url), undefined, {
      raw: 'csrf=x',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
  const charge = () => ({
    subscription_id: randomUUID(),
    amount: 10,
    currency: 'USD',
    callback_secret: 'cbs_wrong',
  });

  /**
   * The public routes that answer 401 for credentials of their own, each with how it is made to;
   * null where no request can make it (sign-out answers 401 only for a session that ends between
   * its two reads; its page goes out through the portal's one sender, as the others' do).
   */
  const CHALLENGED: Record<string, { challenge: RegExp; refuse: () => Promise<HttpResponse> } | null> = {
    'core POST /v1/auth/login': {
      challenge: /^Password realm="licensing"$/,
      refuse: () =>
        server.api.post('/auth/login', { email: seller.user.email, password: 'not the password' }),
    },
    'pay POST /api/checkout/mirror/subscription/charge': {
      challenge: /^CallbackSecret realm="checkout"$/,
      refuse: () => server.pay.post('/api/checkout/mirror/subscription/charge', charge()),
    },
    'pay POST /portal/sign-out': null,
    ...Object.fromEntries(
      [
        '/portal/licenses/:licenseId/devices/release',
        '/portal/licenses/:licenseId/seats/release',
        '/portal/licenses/:licenseId/license-file',
        '/portal/subscriptions/:subscriptionId/cancel',
      ].map((url) => [`pay POST ${url}`, { challenge: PORTAL_CHALLENGE, refuse: portalForm(url) }]),
    ),
    'pay GET /portal/licenses/:licenseId/downloads/:artifactId': {
      challenge: PORTAL_CHALLENGE,
      refuse: () => server.pay.get(somePath('/portal/licenses/:licenseId/downloads/:artifactId')),
    },
  };

  test('a public route answering 401 for credentials of its own names them', async () => {
    const declaring = routes
      .filter(({ route }) => route.auth === 'public' && route.statuses.includes('401'))
      .map(nameOf);
    assert.deepEqual(
      declaring.sort(),
      Object.keys(CHALLENGED).sort(),
      'every public route declaring 401 is here',
    );
    for (const [name, refusal] of Object.entries(CHALLENGED)) {
      if (!refusal) continue;
      const res = await refusal.refuse();
      assert.equal(res.status, 401, `${name}: ${res.text.slice(0, 200)}`);
      assert.match(res.headers.get('www-authenticate') ?? '', refusal.challenge, name);
    }
  });

  test('a kept 401 replayed for its Idempotency-Key names the challenge again', async () => {
    const body = charge();
    const headers = { 'idempotency-key': randomUUID() };
    const first = await server.pay.post('/api/checkout/mirror/subscription/charge', body, { headers });
    const again = await server.pay.post('/api/checkout/mirror/subscription/charge', body, { headers });
    assertError(again, 401, 'invalid_callback_secret');
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
    assert.equal(again.headers.get('www-authenticate'), first.headers.get('www-authenticate'));
    assert.equal(again.headers.get('www-authenticate'), 'CallbackSecret realm="checkout"');
  });
});

interface Creation {
  /** The request, its body made once, so sending it again with the same key is the same request. */
  prepare(): Promise<(headers: Record<string, string>) => Promise<HttpResponse>>;
  /** Where the answer says the new resource is, worked out from its body. */
  location(body: Record<string, string>): string;
  /** A credential that reads the Location, for routes whose resource has a readable route. */
  readWith?: () => string;
  /**
   * A PUT is repeatable by itself (the same name and bytes are the same artifact), without an
   * Idempotency-Key: sent again, it answers 200 with the resource as it is.
   */
  repeatsWithout?: 'idempotency-key';
}

/** Every route that answers 201: a request that creates, and the Location it must carry. */
const CREATES: Record<string, Creation> = {
  'core POST /v1/auth/register': {
    prepare: async () => {
      const body = { email: `new-${uniqueSuffix()}@test.example`, password: 'correct horse battery' };
      return (headers) => server.api.post('/auth/register', body, { headers });
    },
    location: () => '/v1/auth/me',
  },
  'core POST /v1/apps': {
    prepare: async () => (headers) =>
      server.api.post('/apps', { name: 'Located' }, { token: seller.token, headers }),
    location: (app) => `/v1/apps/${app.id}`,
    readWith: () => seller.token,
  },
  'core POST /v1/apps/:appId/api-keys': {
    prepare: async () => (headers) =>
      server.api.post(`/apps/${seller.appId}/api-keys`, { name: 'ci' }, { token: seller.token, headers }),
    location: () => `/v1/apps/${seller.appId}/api-keys`,
    readWith: () => seller.token,
  },
  'core POST /v1/products': {
    prepare: async () => (headers) =>
      server.api.post(
        '/products',
        { appId: seller.appId, name: 'Located', price: 5, currency: 'USD', trialDays: 7 },
        { token: seller.token, headers },
      ),
    location: (product) => `/v1/products/${product.id}`,
    readWith: () => seller.token,
  },
  'core POST /v1/apps/:appId/licenses': {
    prepare: async () => (headers) =>
      server.api.post(`/apps/${seller.appId}/licenses`, {}, { token: seller.token, headers }),
    location: (license) => `/v1/apps/${seller.appId}/licenses/${license.id}`,
    readWith: () => seller.token,
  },
  'core POST /v1/apps/:appId/releases': {
    prepare: async () => {
      const body = { version: `1.0.${randomInt(1_000_000_000)}` };
      return (headers) =>
        server.api.post(`/apps/${seller.appId}/releases`, body, { token: seller.token, headers });
    },
    location: (release) => `/v1/apps/${seller.appId}/releases/${release.id}`,
    readWith: () => seller.token,
  },
  'core PUT /v1/apps/:appId/releases/:releaseId/artifacts/:filename': {
    prepare: async () => {
      const release = (
        await server.api.post(
          `/apps/${seller.appId}/releases`,
          { version: `2.0.${randomInt(1_000_000_000)}` },
          { token: seller.token },
        )
      ).expect(201).body;
      const where = `/apps/${seller.appId}/releases/${release.id}/artifacts/app.zip?platform=linux`;
      return (headers) =>
        server.api.put(where, undefined, {
          token: seller.token,
          headers: { ...headers, 'content-type': 'application/octet-stream' },
          raw: 'the bytes',
        });
    },
    location: (artifact) =>
      `/v1/apps/${seller.appId}/releases/${artifact.releaseId}/artifacts/app.zip?platform=linux`,
    readWith: () => seller.token,
    repeatsWithout: 'idempotency-key',
  },
  'core POST /v1/apps/:appId/releases/:releaseId/artifacts': {
    prepare: async () => {
      const release = (
        await server.api.post(
          `/apps/${seller.appId}/releases`,
          { version: `3.0.${randomInt(1_000_000_000)}` },
          { token: seller.token },
        )
      ).expect(201).body;
      const body = { filename: 'app.dmg', platform: 'macos', url: 'https://downloads.example.com/app.dmg' };
      return (headers) =>
        server.api.post(`/apps/${seller.appId}/releases/${release.id}/artifacts`, body, {
          token: seller.token,
          headers,
        });
    },
    location: (artifact) =>
      `/v1/apps/${seller.appId}/releases/${artifact.releaseId}/artifacts/app.dmg?platform=macos`,
    readWith: () => seller.token,
  },
  'core POST /v1/webhooks': {
    prepare: async () => (headers) =>
      server.api.post(
        '/webhooks',
        { url: 'https://hooks.example.com/in', events: ['license.created'] },
        { token: seller.token, headers },
      ),
    location: (endpoint) => `/v1/webhooks/${endpoint.id}`,
    readWith: () => seller.token,
  },
  'core POST /v1/stripe/create-payment-intent': {
    prepare: async () => {
      const body = { productId: await productId(), email: 'buyer@example.com' };
      return (headers) => server.api.post('/stripe/create-payment-intent', body, { headers });
    },
    location: (intent) => `/v1/orders/${intent.orderId}`,
    readWith: () => seller.token,
  },
  'pay POST /api/checkout/trials': {
    prepare: async () => {
      const body = { productId: await productId(), email: `trial-${uniqueSuffix()}@example.com` };
      return (headers) => server.pay.post('/api/checkout/trials', body, { headers });
    },
    location: () => '/portal',
  },
  'pay POST /api/checkout/payment-intent': {
    prepare: async () => {
      const body = { productId: await productId(), email: 'buyer@example.com', attempt: randomUUID() };
      return (headers) => server.pay.post('/api/checkout/payment-intent', body, { headers });
    },
    location: (started) => started.returnUrl as string,
  },
};

let product: string | undefined;
/** One product on sale with a trial, for the routes that start a purchase or a trial. */
async function productId(): Promise<string> {
  product ??= (
    await server.api.post(
      '/products',
      { appId: seller.appId, name: 'On sale', price: 9, currency: 'USD', trialDays: 14 },
      { token: seller.token },
    )
  ).expect(201).body.id as string;
  return product;
}

describe('every 201 says in Location where what it created is', () => {
  test('every route that answers 201 has a happy path here', () => {
    const creating = routes.filter(({ route }) => route.statuses.includes('201')).map(nameOf);
    assert.deepEqual(creating.sort(), Object.keys(CREATES).sort());
  });

  for (const [name, creation] of Object.entries(CREATES)) {
    test(`${name}: Location names it, readable there, and a replay carries it too`, async () => {
      const send = await creation.prepare();
      const headers = { 'idempotency-key': randomUUID() };
      const created = (await send(headers)).expect(201);
      const location = created.headers.get('location');
      assert.equal(location, creation.location(created.body), name);
      if (creation.readWith) {
        const path = (location ?? '').replace(/^\/v1/, '');
        (await server.api.get(path, { token: creation.readWith() })).expect(200);
      }
      if (name === 'core POST /v1/auth/register') {
        (await server.api.get('/auth/me', { token: created.body.token })).expect(200);
        return; // takes no Idempotency-Key
      }
      const replayed = await send(headers);
      if (creation.repeatsWithout) {
        replayed.expect(200);
        assert.equal(replayed.body.id, created.body.id, `${name} answers the same resource`);
        return;
      }
      assert.equal(replayed.headers.get('idempotent-replayed'), 'true', `${name} replays`);
      assert.equal(replayed.headers.get('location'), location, `${name} replay`);
    });
  }
});

describe('a limited route’s answers carry the IETF RateLimit fields beside X-RateLimit-*', () => {
  test('RateLimit-Policy names the per-address limit, RateLimit what is left of it and when it renews', async () => {
    const limited = routes.filter(({ route }) => route.rateLimited);
    assert.ok(limited.length >= 15, `${limited.length} limited routes`);
    for (const entry of limited) {
      const { host, route } = entry;
      const options = route.auth === 'public' ? {} : { token: seller.token };
      const res = await call(host, route.method, somePath(route.url), undefined, options);
      assert.ok(res.status < 500, `${nameOf(entry)} answered ${res.status}`);
      const limit = res.headers.get('x-ratelimit-limit');
      assert.ok(limit, `${nameOf(entry)} carries X-RateLimit-Limit`);
      assert.equal(res.headers.get('ratelimit-policy'), `"address";q=${limit};w=60`, nameOf(entry));
      assert.equal(
        res.headers.get('ratelimit'),
        `"address";r=${res.headers.get('x-ratelimit-remaining')};t=${res.headers.get('x-ratelimit-reset')}`,
        nameOf(entry),
      );
    }
  });

  test('routes without a limit carry neither', async () => {
    const res = (await server.api.get('/apps', { token: seller.token })).expect(200);
    assert.equal(res.headers.get('ratelimit'), null);
    assert.equal(res.headers.get('ratelimit-policy'), null);
  });
});
