import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sealMirrorPayload } from '../../packages/client/src/index.js';
import { type RouteInfo, registeredRoutes } from '../platform/http/create-http-app.js';
import { fetchOperations, type Operation, operationName } from '../testing/api-operations.js';
import { createApiKey, createApp, startTestServer, type TestServer } from '../testing/harness.js';
import { type HttpResponse, httpClient } from '../testing/http-client.js';
import { type Receiver, startReceiver } from '../testing/receiver.js';
import { plausibleValue } from '../testing/schema-arbitrary.js';
import {
  changedTables,
  createSellerEstate,
  estateFields,
  estateMarkers,
  estatePath,
  type SellerEstate,
  snapshotRows,
} from '../testing/seller-estate.js';

/**
 * Tenant isolation over every route that names a resource, without an entry per route: each
 * registered route with a path parameter is called, with the owner's real ids in its path and a
 * plausible body generated from its request schema (fields that name a resource carry the
 * owner's ids too), by everyone who must not reach the owner's data:
 *
 * - bearer routes: another seller's session token and API key, and the owner's own API key of
 *   another app. Only 403 or 404 may answer: valid credentials never get 401, and a 400 would mean
 *   the route judged the request before finding the resource was not the caller's (this suite's
 *   bodies are valid, so a 400 fails it as a sign the generated body is off);
 * - public routes (the checkout host): credentials travel in the request (a payload sealed with
 *   the product's callback secret, an order's client secret, the callback secret itself), so they
 *   carry another seller's. 400 (the refused-link page, or bad_request), 401 (a secret that does
 *   not match), 403 or 404 may answer. An updater feed takes a license key in its Authorization
 *   header: the stranger sends their own.
 *
 * Checkout routes without a path parameter that take such a credential (the renewal charge, mirror
 * validation, the payment intent with a payload) are called the same way; they may answer a
 * business outcome (verified: false), so for them only the leak and row checks below apply.
 *
 * Every answer must show nothing of the owner's that the caller did not send (ids, keys,
 * secrets, e-mails, names: each carries a unique marker), and the owner's rows must be unchanged.
 * A parameter this suite cannot map to an owned id fails it: map it in seller-estate.ts.
 */

let server: TestServer;
let receiver: Receiver;
let owner: SellerEstate;
let stranger: SellerEstate;
let siblingKey: string;
let operations: Operation[];
const routes: { host: 'core' | 'pay'; route: RouteInfo }[] = [];

/**
 * Public routes that answer anyone by id by design: a seller's logo, which their checkout pages
 * and buyers' e-mails show. They may answer 200; what they answer must still reveal nothing else.
 */
const PUBLISHED = ['core GET /v1/brands/:brandId/logo', 'pay GET /brands/:brandId/logo'];

/** Request fields that carry a credential; a caller who is not the owner sends their own. */
const CREDENTIAL_FIELDS = ['callback_secret', 'payload', 'key', 'email'];
/** Request fields that name one of the owner's resources (appId, productId, transaction...). */
let resourceFields: Record<string, unknown> = {};

before(async () => {
  server = await startTestServer();
  receiver = await startReceiver();
  owner = await createSellerEstate(server, { webhookUrl: receiver.url });
  stranger = await createSellerEstate(server, { webhookUrl: receiver.url });
  const sibling = await createApp(server, owner.seller.token, 'Sibling');
  siblingKey = (await createApiKey(server, owner.seller.token, sibling.id)).key;
  operations = await fetchOperations(server);
  const { key: _key, license: _license, ...resources } = estateFields(owner);
  resourceFields = resources;
  for (const route of registeredRoutes(server.service.core)) routes.push({ host: 'core', route });
  for (const route of registeredRoutes(server.service.pay)) routes.push({ host: 'pay', route });
});
after(async () => {
  await server.stop();
  await receiver.close();
});

const nameOf = (host: string, route: RouteInfo) => `${host} ${route.method} ${route.url}`;
const operationOf = (host: string, route: RouteInfo) =>
  operations.find((op) => operationName(op) === nameOf(host, route));

/** What the stranger fills credential fields with: theirs, aimed at the owner's product. */
function strangerCredentials(): Record<string, unknown> {
  return {
    callback_secret: stranger.secrets.callbackSecret,
    payload: sealMirrorPayload({
      callbackSecret: stranger.secrets.callbackSecret,
      productId: owner.ids.productId,
      token: 'tenant-isolation',
      email: stranger.buyerEmail,
    }),
    key: stranger.secrets.orderClientSecret,
    email: stranger.buyerEmail,
  };
}

/** Query and body for the route: plausible values, owner ids for resource fields, the stranger's credentials. */
function requestFor(op: Operation) {
  const fields: Record<string, unknown> = {
    ...estateFields(owner),
    url: receiver.url,
    currency: 'USD',
    ...(op.auth === 'public' ? strangerCredentials() : {}),
  };
  // Fields naming the owner's resources, and credentials, are always sent, optional or not:
  // leaving one out would only test the route's defaults.
  const aimed = (name: string) =>
    name in resourceFields || (op.auth === 'public' && CREDENTIAL_FIELDS.includes(name));
  const query = new URLSearchParams(
    op.query
      .filter((q) => q.required || aimed(q.name))
      .map((q): [string, string] => [q.name, String(plausibleValue(q.schema, fields, q.name))]),
  ).toString();
  let body: Record<string, unknown> | undefined;
  if (op.body) {
    body = plausibleValue(op.body.schema, fields) as Record<string, unknown>;
    for (const name of Object.keys(op.body.schema.properties ?? {}))
      if (aimed(name)) body[name] = fields[name];
  }
  return { query: query ? `?${query}` : '', body };
}

/**
 * Headers a public route takes its credential in (an updater feed's `Authorization: License
 * <key>`): the stranger's own license key.
 */
function strangerHeaders(op: Operation): Record<string, string> {
  const takesLicense =
    op.auth === 'public' && op.headers.some((h) => h.name.toLowerCase() === 'authorization');
  return takesLicense ? { authorization: `License ${stranger.secrets.licenseKey}` } : {};
}

function send(op: Operation, path: string, body: unknown, token?: string): Promise<HttpResponse> {
  const client = httpClient(op.host === 'core' ? server.service.coreUrl : server.service.payUrl);
  if (op.body?.mediaType === 'application/x-www-form-urlencoded') {
    const form = new URLSearchParams(
      Object.entries(body ?? {}).map(([k, v]): [string, string] => [k, String(v)]),
    );
    return client.request(op.method, path, undefined, {
      raw: form.toString(),
      headers: { 'content-type': op.body.mediaType },
      timeoutMs: 10_000,
    });
  }
  return client.request(op.method, path, body, {
    ...(token ? { token } : {}),
    headers: strangerHeaders(op),
    timeoutMs: 10_000,
  });
}

/** What went wrong with one call, or nothing. */
async function check(
  op: Operation,
  caller: string,
  token: string | undefined,
  strict: boolean,
): Promise<string[]> {
  const { query, body } = requestFor(op);
  const path = `${estatePath(owner, op.routeUrl)}${query}`;
  const before = await snapshotRows(server.db, [owner.ids.userId]);
  const res = await send(op, path, body, token);
  const after = await snapshotRows(server.db, [owner.ids.userId]);
  const where = `${operationName(op)} as ${caller}: ${op.method} ${path}`;
  const problems: string[] = [];
  const sent = `${path}${JSON.stringify(body ?? '')}`;
  const code = res.body?.error?.code;
  const isPage = res.headers.get('content-type')?.startsWith('text/html') ?? false;
  const allowed = token
    ? [403, 404]
    : [400, 401, 403, 404, ...(PUBLISHED.includes(operationName(op)) ? [200] : [])];
  if (res.status >= 500) problems.push(`${where} answered ${res.status}: ${res.text.slice(0, 200)}`);
  else if (strict && !allowed.includes(res.status))
    problems.push(
      `${where} answered ${res.status}, not one of ${allowed.join('/')}: ${res.text.slice(0, 200)}`,
    );
  else if (strict && res.status === 400 && !isPage && code !== 'bad_request')
    problems.push(`${where} refused the request itself (${code}), not the caller: ${res.text.slice(0, 200)}`);
  if (
    res.status >= 400 &&
    !isPage &&
    (typeof code !== 'string' || res.body.error.requestId !== res.headers.get('x-request-id'))
  )
    problems.push(`${where} answered ${res.status} outside the error body: ${res.text.slice(0, 200)}`);
  const leaked = estateMarkers(owner).filter((marker) => !sent.includes(marker) && res.text.includes(marker));
  if (leaked.length)
    problems.push(`${where} showed the owner's ${leaked.join(', ')}: ${res.text.slice(0, 300)}`);
  const changed = changedTables(before, after);
  if (changed.length)
    problems.push(`${where} changed the owner's ${changed.join(', ')} (answered ${res.status})`);
  return problems;
}

/**
 * Routes this suite calls: every route with a path parameter; bearer routes whose body or query
 * names a resource (the owner's ids go there); checkout routes that take a credential.
 */
function inScope(op: Operation): boolean {
  if (op.pathParams.length) return true;
  const named = [...op.query.map((q) => q.name), ...Object.keys(op.body?.schema.properties ?? {})];
  if (op.auth !== 'public') return named.some((name) => name in resourceFields);
  return (
    op.host === 'pay' && named.some((name) => ['callback_secret', 'payload', 'key', 'license'].includes(name))
  );
}

describe('tenant isolation over every route', () => {
  test('every registered route is in its host’s document, and every path parameter maps to an owned id', () => {
    const problems: string[] = [];
    for (const { host, route } of routes) {
      const op = operationOf(host, route);
      if (!op) {
        problems.push(`${nameOf(host, route)} is not in the OpenAPI document`);
        continue;
      }
      try {
        estatePath(owner, op.routeUrl);
      } catch (error) {
        problems.push((error as Error).message);
      }
    }
    assert.deepEqual(problems, []);
  });

  test('the owner reads each of its resources through the same paths (the ids are right)', async () => {
    for (const { host, route } of routes) {
      const op = operationOf(host, route);
      if (!op || route.method !== 'GET' || !op.pathParams.length || op.auth === 'public') continue;
      const res = await send(op, estatePath(owner, op.routeUrl), undefined, owner.seller.token);
      assert.equal(res.status, 200, `${nameOf(host, route)}: ${res.text.slice(0, 300)}`);
    }
  });

  test('another seller, their API key and a key of the owner’s other app reach nothing of the owner’s', async (t) => {
    const scoped = routes
      .map(({ host, route }) => operationOf(host, route))
      .filter((op): op is Operation => op !== undefined && inScope(op));
    assert.ok(scoped.length > 40, `only ${scoped.length} routes in scope`);
    let attempts = 0;
    for (const op of scoped) {
      await t.test(operationName(op), async () => {
        const strict = op.pathParams.length > 0;
        const callers: [string, string | undefined][] =
          op.auth === 'public'
            ? [['a stranger with another seller’s credentials', undefined]]
            : [
                ['another seller', stranger.seller.token],
                ['another seller’s API key', stranger.apiKey],
                ['the owner’s key of another app', siblingKey],
              ];
        const problems: string[] = [];
        for (const [caller, token] of callers) problems.push(...(await check(op, caller, token, strict)));
        attempts += callers.length;
        assert.deepEqual(problems, []);
      });
    }
    t.diagnostic(`${scoped.length} routes, ${attempts} foreign callers tried`);
  });
});
