import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { type RouteInfo, registeredRoutes } from '../platform/http/create-http-app.js';
import { newId } from '../platform/ids.js';
import {
  createApiKey,
  createApp,
  type Seller,
  signUp,
  startTestServer,
  type TestServer,
} from '../testing/harness.js';
import { assertError, httpClient, type RequestOptions } from '../testing/http-client.js';
import { buyWithSandbox, startPurchase } from '../testing/purchases.js';

/**
 * The shared auth and tenant-isolation suite. Every route registered on either host must
 * have an entry below; a new route without one fails this file, so no route can forget its
 * checks. For each protected route it proves: no credentials, a malformed header, a bad
 * token and a revoked API key answer 401 with the Bearer challenge; a seller's token on an admin route answers 403;
 * an API key on a user-token-only route answers 403; and another seller's resource is 404.
 */

interface Owned {
  appId: string;
  apiKeyId: string;
  productId: string;
  licenseId: string;
  webhookId: string;
  deliveryId: string;
  orderId: string;
  subscriptionId: string;
  releaseId: string;
}

type Entry =
  /** Open to anyone; listed so that opening a route is a decision. */
  | { kind: 'public' }
  /** Works on the caller's own data only (lists, create, me): nothing foreign to address. */
  | { kind: 'own'; body?: unknown }
  /** Addresses one resource by id: another seller's answers 404. */
  | { kind: 'resource'; path: (owned: Owned) => string; body?: unknown }
  | { kind: 'admin'; path?: (ids: { userId: string }) => string; body?: unknown };

const ROUTES: Record<string, Entry> = {
  'core GET /v1/health': { kind: 'public' },
  'core GET /v1/health/ready': { kind: 'public' },
  // Kubernetes-style probes at the host's root, the same answers as the two above.
  'core GET /healthz': { kind: 'public' },
  'core GET /readyz': { kind: 'public' },
  'core POST /v1/auth/register': { kind: 'public' },
  'core POST /v1/auth/login': { kind: 'public' },
  'core GET /v1/auth/me': { kind: 'own' },
  // The account's own brand: no id to address (brand.test.ts proves another seller's stays theirs).
  'core GET /v1/brand': { kind: 'own' },
  'core PUT /v1/brand': { kind: 'own', body: { displayName: 'x' } },
  'core PUT /v1/brand/logo': { kind: 'own' },
  'core DELETE /v1/brand/logo': { kind: 'own' },
  // A seller's logo, public by design: their checkout pages and buyers' e-mails show it.
  'core GET /v1/brands/:brandId/logo': { kind: 'public' },
  'core GET /v1/admin/users': { kind: 'admin' },
  'core PATCH /v1/admin/users/:id': {
    kind: 'admin',
    path: (ids) => `/v1/admin/users/${ids.userId}`,
    body: { tier: 'pro' },
  },
  'core DELETE /v1/admin/users/:id': { kind: 'admin', path: (ids) => `/v1/admin/users/${ids.userId}` },
  'core POST /v1/apps': { kind: 'own', body: { name: 'x' } },
  'core GET /v1/apps': { kind: 'own' },
  'core GET /v1/apps/:appId': { kind: 'resource', path: (o) => `/v1/apps/${o.appId}` },
  'core PATCH /v1/apps/:appId': {
    kind: 'resource',
    path: (o) => `/v1/apps/${o.appId}`,
    body: { name: 'stolen' },
  },
  'core DELETE /v1/apps/:appId': { kind: 'resource', path: (o) => `/v1/apps/${o.appId}` },
  'core POST /v1/apps/:appId/api-keys': {
    kind: 'resource',
    path: (o) => `/v1/apps/${o.appId}/api-keys`,
    body: { name: 'x' },
  },
  'core GET /v1/apps/:appId/api-keys': { kind: 'resource', path: (o) => `/v1/apps/${o.appId}/api-keys` },
  'core DELETE /v1/apps/:appId/api-keys/:keyId': {
    kind: 'resource',
    path: (o) => `/v1/apps/${o.appId}/api-keys/${o.apiKeyId}`,
  },
  'core GET /v1/products': { kind: 'own' },
  'core POST /v1/products': { kind: 'own', body: { name: 'x', price: 1, currency: 'USD' } },
  'core GET /v1/products/:id': { kind: 'resource', path: (o) => `/v1/products/${o.productId}` },
  'core PUT /v1/products/:id': {
    kind: 'resource',
    path: (o) => `/v1/products/${o.productId}`,
    body: { name: 'stolen', price: 1, currency: 'USD' },
  },
  'core PATCH /v1/products/:id': {
    kind: 'resource',
    path: (o) => `/v1/products/${o.productId}`,
    body: { name: 'stolen' },
  },
  'core DELETE /v1/products/:id': { kind: 'resource', path: (o) => `/v1/products/${o.productId}` },
  'core POST /v1/products/:id/rotate-callback-secret': {
    kind: 'resource',
    path: (o) => `/v1/products/${o.productId}/rotate-callback-secret`,
  },
  'core POST /v1/products/:id/license-policy/apply': {
    kind: 'resource',
    path: (o) => `/v1/products/${o.productId}/license-policy/apply`,
  },
  'core GET /v1/apps/:appId/releases': { kind: 'resource', path: (o) => `/v1/apps/${o.appId}/releases` },
  'core POST /v1/apps/:appId/releases': {
    kind: 'resource',
    path: (o) => `/v1/apps/${o.appId}/releases`,
    body: { version: '9.9.9' },
  },
  'core GET /v1/apps/:appId/releases/:releaseId': { kind: 'resource', path: (o) => release(o) },
  'core PATCH /v1/apps/:appId/releases/:releaseId': {
    kind: 'resource',
    path: (o) => release(o),
    body: { notes: 'x' },
  },
  'core POST /v1/apps/:appId/releases/:releaseId/publish': {
    kind: 'resource',
    path: (o) => `${release(o)}/publish`,
  },
  'core POST /v1/apps/:appId/releases/:releaseId/yank': {
    kind: 'resource',
    path: (o) => `${release(o)}/yank`,
  },
  'core DELETE /v1/apps/:appId/releases/:releaseId': { kind: 'resource', path: (o) => release(o) },
  'core GET /v1/apps/:appId/releases/:releaseId/downloads': {
    kind: 'resource',
    path: (o) => `${release(o)}/downloads`,
  },
  'core GET /v1/apps/:appId/releases/:releaseId/artifacts': {
    kind: 'resource',
    path: (o) => `${release(o)}/artifacts`,
  },
  'core POST /v1/apps/:appId/releases/:releaseId/artifacts': {
    kind: 'resource',
    path: (o) => `${release(o)}/artifacts`,
    body: { filename: 'hosted.zip', url: 'https://downloads.example.com/hosted.zip' },
  },
  'core PUT /v1/apps/:appId/releases/:releaseId/artifacts/:filename': {
    kind: 'resource',
    path: (o) => `${release(o)}/artifacts/app.zip`,
  },
  'core GET /v1/apps/:appId/releases/:releaseId/artifacts/:filename': {
    kind: 'resource',
    path: (o) => `${release(o)}/artifacts/app.zip`,
  },
  'core DELETE /v1/apps/:appId/releases/:releaseId/artifacts/:filename': {
    kind: 'resource',
    path: (o) => `${release(o)}/artifacts/app.zip`,
  },
  // Across the seller's apps: appId narrows it, another seller's app answers 404 (lists.test.ts).
  'core GET /v1/licenses': { kind: 'own' },
  'core GET /v1/licenses/export.csv': { kind: 'own' },
  'core GET /v1/apps/:appId/licenses': { kind: 'resource', path: (o) => `/v1/apps/${o.appId}/licenses` },
  'core POST /v1/apps/:appId/licenses': {
    kind: 'resource',
    path: (o) => `/v1/apps/${o.appId}/licenses`,
    body: {},
  },
  'core GET /v1/apps/:appId/licenses/:licenseId': { kind: 'resource', path: (o) => license(o) },
  'core PATCH /v1/apps/:appId/licenses/:licenseId': {
    kind: 'resource',
    path: (o) => license(o),
    body: { email: 'x@example.com' },
  },
  'core POST /v1/apps/:appId/licenses/:licenseId/suspend': {
    kind: 'resource',
    path: (o) => `${license(o)}/suspend`,
  },
  'core POST /v1/apps/:appId/licenses/:licenseId/revoke': {
    kind: 'resource',
    path: (o) => `${license(o)}/revoke`,
  },
  'core POST /v1/apps/:appId/licenses/:licenseId/reinstate': {
    kind: 'resource',
    path: (o) => `${license(o)}/reinstate`,
  },
  'core GET /v1/apps/:appId/licenses/:licenseId/devices': {
    kind: 'resource',
    path: (o) => `${license(o)}/devices`,
  },
  'core GET /v1/apps/:appId/licenses/:licenseId/seats': {
    kind: 'resource',
    path: (o) => `${license(o)}/seats`,
  },
  'core GET /v1/apps/:appId/licenses/:licenseId/events': {
    kind: 'resource',
    path: (o) => `${license(o)}/events`,
  },
  'core GET /v1/apps/:appId/licenses/:licenseId/usage': {
    kind: 'resource',
    path: (o) => `${license(o)}/usage`,
  },
  'core PUT /v1/apps/:appId/licenses/:licenseId/usage': {
    kind: 'resource',
    path: (o) => `${license(o)}/usage`,
    body: { uses: 0 },
  },
  'core POST /v1/apps/:appId/licenses/:licenseId/usage/reset': {
    kind: 'resource',
    path: (o) => `${license(o)}/usage/reset`,
  },
  'core POST /v1/apps/:appId/licenses/:licenseId/regenerate-key': {
    kind: 'resource',
    path: (o) => `${license(o)}/regenerate-key`,
  },
  'core DELETE /v1/apps/:appId/licenses/:licenseId/seats/:hwuid': {
    kind: 'resource',
    path: (o) => `${license(o)}/seats/pc-1`,
  },
  'core DELETE /v1/apps/:appId/licenses/:licenseId/devices/:hwuid': {
    kind: 'resource',
    path: (o) => `${license(o)}/devices/pc-1`,
  },
  'core POST /v1/licenses/verify': { kind: 'public' },
  'core POST /v1/licenses/validate-hardware': { kind: 'public' },
  'core POST /v1/licenses/introspect': { kind: 'public' },
  'core POST /v1/licenses/checkout': { kind: 'public' },
  'core POST /v1/licenses/checkin': { kind: 'public' },
  'core POST /v1/licenses/usage': { kind: 'public' },
  'core GET /v1/licenses/jwks': { kind: 'public' },
  // Cross-origin preflights of the public routes above (src/platform/http/cors.ts).
  'core OPTIONS /v1/licenses/verify': { kind: 'public' },
  'core OPTIONS /v1/licenses/validate-hardware': { kind: 'public' },
  'core OPTIONS /v1/licenses/introspect': { kind: 'public' },
  'core OPTIONS /v1/licenses/checkout': { kind: 'public' },
  'core OPTIONS /v1/licenses/checkin': { kind: 'public' },
  'core OPTIONS /v1/licenses/usage': { kind: 'public' },
  'core OPTIONS /v1/licenses/jwks': { kind: 'public' },
  // Client software's update check and download links: the license key is the credential, and a
  // key of another app answers license_not_found (distribution.test.ts). A file link carries its
  // own signature (a changed one answers 403).
  'core POST /v1/releases/upgrade': { kind: 'public' },
  'core POST /v1/releases/download': { kind: 'public' },
  'core GET /v1/releases/files/:artifactId/:filename': { kind: 'public' },
  'core OPTIONS /v1/releases/upgrade': { kind: 'public' },
  'core OPTIONS /v1/releases/download': { kind: 'public' },
  // Updater feeds: the license key in the Authorization header is the credential, checked as the
  // update check checks it (feeds.test.ts); their file addresses check it again.
  'core GET /v1/releases/feeds/:appId/electron/:channelFile': { kind: 'public' },
  'core GET /v1/releases/feeds/:appId/tauri/:target/:arch/:currentVersion': { kind: 'public' },
  'core GET /v1/releases/feeds/:appId/files/:version/:filename': { kind: 'public' },
  // Offline activation names its license by the key inside the request; another seller's (or
  // another app's key) answers 404 (offline-activation.test.ts). The revocation list is public.
  'core POST /v1/licenses/offline-activations': { kind: 'own', body: { request: 'x' } },
  'core GET /v1/licenses/revocations': { kind: 'public' },
  'core OPTIONS /v1/licenses/revocations': { kind: 'public' },
  // Which token a jti names is checked by the service (404 for another seller's); see tokens.test.ts.
  'core POST /v1/licenses/revoke-token': { kind: 'own', body: { jti: 'x' } },
  'core POST /v1/webhooks': {
    kind: 'own',
    body: { url: 'https://hooks.example.com/x', events: ['license.created'] },
  },
  'core GET /v1/webhooks': { kind: 'own' },
  'core GET /v1/webhooks/:id': { kind: 'resource', path: (o) => `/v1/webhooks/${o.webhookId}` },
  'core PUT /v1/webhooks/:id': {
    kind: 'resource',
    path: (o) => `/v1/webhooks/${o.webhookId}`,
    body: { url: 'https://evil.example.com/x', events: ['license.created'] },
  },
  'core DELETE /v1/webhooks/:id': { kind: 'resource', path: (o) => `/v1/webhooks/${o.webhookId}` },
  'core POST /v1/webhooks/:id/enable': {
    kind: 'resource',
    path: (o) => `/v1/webhooks/${o.webhookId}/enable`,
  },
  'core POST /v1/webhooks/:id/disable': {
    kind: 'resource',
    path: (o) => `/v1/webhooks/${o.webhookId}/disable`,
  },
  'core POST /v1/webhooks/:id/rotate-secret': {
    kind: 'resource',
    path: (o) => `/v1/webhooks/${o.webhookId}/rotate-secret`,
  },
  'core POST /v1/webhooks/:id/test': { kind: 'resource', path: (o) => `/v1/webhooks/${o.webhookId}/test` },
  'core POST /v1/webhooks/:id/deliveries/:deliveryId/redeliver': {
    kind: 'resource',
    path: (o) => `/v1/webhooks/${o.webhookId}/deliveries/${o.deliveryId}/redeliver`,
  },
  'core GET /v1/products/:id/merchant-webhook/logs': {
    kind: 'resource',
    path: (o) => `/v1/products/${o.productId}/merchant-webhook/logs`,
  },
  'core POST /v1/products/:id/merchant-webhook/deliveries/:deliveryId/redeliver': {
    kind: 'resource',
    path: (o) => `/v1/products/${o.productId}/merchant-webhook/deliveries/${o.deliveryId}/redeliver`,
  },
  'core GET /v1/webhooks/:id/logs': { kind: 'resource', path: (o) => `/v1/webhooks/${o.webhookId}/logs` },
  'core POST /v1/stripe/create-payment-intent': { kind: 'public' },
  'core POST /v1/stripe/confirm-payment': { kind: 'public' },
  'core POST /v1/stripe/webhook': { kind: 'public' },
  // The transaction is named in the body; another seller's answers 404 (payments.test.ts).
  'core POST /v1/transaction/status': { kind: 'own', body: { transaction: 'txn_x' } },
  'core POST /v1/transactions': { kind: 'own', body: { transactionsId: ['txn_x'], limits: 'all' } },
  'core GET /v1/orders': { kind: 'own' },
  'core GET /v1/orders/export.csv': { kind: 'own' },
  // Disputes come from the card partner only; isolation is proven in stripe.test.ts.
  'core GET /v1/disputes': { kind: 'own' },
  'core GET /v1/disputes/:id': { kind: 'own' },
  'core GET /v1/orders/:id': { kind: 'resource', path: (o) => `/v1/orders/${o.orderId}` },
  'core GET /v1/subscriptions': { kind: 'own' },
  'core POST /v1/subscriptions/:id/cancel': {
    kind: 'resource',
    path: (o) => `/v1/subscriptions/${o.subscriptionId}/cancel`,
  },
  'core GET /v1/overview': { kind: 'own' },
  'core GET /v1/analytics/stats': { kind: 'admin' },
  'core GET /v1/analytics/revenue': { kind: 'admin' },
  'core GET /v1/analytics/licenses': { kind: 'admin' },
  'core GET /v1/analytics/users': { kind: 'admin' },
  // The seller dashboard's page and assets: public files; the page then calls /v1 with a token.
  'core GET /dashboard': { kind: 'public' },
  'core GET /dashboard/assets/app.js': { kind: 'public' },
  'core GET /dashboard/assets/app.css': { kind: 'public' },
  // The icon browsers show beside a page's title, on both hosts.
  'core GET /favicon.svg': { kind: 'public' },
  'core GET /favicon.ico': { kind: 'public' },
  'pay GET /favicon.svg': { kind: 'public' },
  'pay GET /favicon.ico': { kind: 'public' },
  // The API reference of each host: its OpenAPI document and the readable page.
  'core GET /v1/openapi.json': { kind: 'public' },
  'core GET /docs': { kind: 'public' },
  'pay GET /openapi.json': { kind: 'public' },
  'pay GET /docs': { kind: 'public' },
  'pay GET /health': { kind: 'public' },
  'pay GET /health/ready': { kind: 'public' },
  'pay GET /healthz': { kind: 'public' },
  'pay GET /readyz': { kind: 'public' },
  // Buyers' pages and the checkout API: public by design, or authenticated by the product's
  // callback secret in the body (the charge route; checkout.test.ts and subscriptions.test.ts).
  'pay GET /checkout/assets/checkout.css': { kind: 'public' },
  'pay GET /checkout/assets/checkout.js': { kind: 'public' },
  'pay GET /checkout/assets/overlay-frame.js': { kind: 'public' },
  // The overlay checkout's script for sellers' sites, and the logos their pages show.
  'pay GET /overlay.js': { kind: 'public' },
  'pay GET /brands/:brandId/logo': { kind: 'public' },
  'pay GET /checkout/:productId': { kind: 'public' },
  'pay POST /checkout/:productId': { kind: 'public' },
  'pay POST /checkout/:productId/trial': { kind: 'public' },
  'pay POST /api/checkout/trials': { kind: 'public' },
  'pay GET /checkout/:productId/complete': { kind: 'public' },
  'pay GET /checkout/:productId/continue': { kind: 'public' },
  'pay POST /api/checkout/payment-intent': { kind: 'public' },
  'pay POST /api/checkout/mirror/validate': { kind: 'public' },
  'pay POST /api/checkout/mirror/subscription/charge': { kind: 'public' },
  'pay POST /api/checkout/crypto/webhook': { kind: 'public' },
  // The buyer portal: public routes whose own session cookie and CSRF token guard every change
  // (src/modules/portal/portal.test.ts proves them).
  'pay GET /portal/assets/portal.css': { kind: 'public' },
  'pay GET /portal': { kind: 'public' },
  'pay POST /portal/sign-in': { kind: 'public' },
  'pay GET /portal/sign-in/:token': { kind: 'public' },
  'pay POST /portal/sign-in/:token': { kind: 'public' },
  'pay POST /portal/sign-out': { kind: 'public' },
  'pay POST /portal/licenses/:licenseId/devices/release': { kind: 'public' },
  'pay POST /portal/licenses/:licenseId/seats/release': { kind: 'public' },
  'pay POST /portal/licenses/:licenseId/license-file': { kind: 'public' },
  'pay POST /portal/subscriptions/:subscriptionId/cancel': { kind: 'public' },
  'pay GET /portal/licenses/:licenseId/downloads/:artifactId': { kind: 'public' },
};

const license = (o: Owned) => `/v1/apps/${o.appId}/licenses/${o.licenseId}`;
const release = (o: Owned) => `/v1/apps/${o.appId}/releases/${o.releaseId}`;

let server: TestServer;
let owner: Seller;
let owned: Owned;
let stranger: Seller;
let strangerKey: string;
let revokedKey: string;
let siblingKey: string;
let expiredToken: string;
let unsignedToken: string;
let deletedUserToken: string;
const JWT_SECRET = 'route-auth-suite-secret-0123456789abcdef';
const routes: { host: 'core' | 'pay'; route: RouteInfo }[] = [];

before(async () => {
  server = await startTestServer({ JWT_SECRET });
  owner = await signUp(server);
  const app = await createApp(server, owner.token);
  const apiKey = await createApiKey(server, owner.token, app.id);
  const product = (
    await server.api.post(
      '/products',
      { appId: app.id, name: 'Owned', price: 5, currency: 'USD' },
      { token: owner.token },
    )
  ).expect(201).body;
  const issued = (await server.api.post(`/apps/${app.id}/licenses`, {}, { token: owner.token })).expect(
    201,
  ).body;
  const draft = (
    await server.api.post(`/apps/${app.id}/releases`, { version: '1.0.0' }, { token: owner.token })
  ).expect(201).body;
  (
    await server.api.put(`/apps/${app.id}/releases/${draft.id}/artifacts/app.zip`, undefined, {
      token: owner.token,
      headers: { 'content-type': 'application/octet-stream' },
      raw: 'owned bytes',
    })
  ).expect(201);
  // An app-bound endpoint, so the app's keys may address it and a sibling app's may not.
  const webhook = (
    await server.api.post(
      '/webhooks',
      { url: 'https://hooks.example.com/in', events: ['license.created'], appId: app.id },
      { token: owner.token },
    )
  ).expect(201).body;
  const delivery = await server.db
    .insertInto('webhook_deliveries')
    .values({
      id: newId(),
      endpoint_id: webhook.id,
      event_id: null,
      event_type: 'webhook.test',
      payload: '{}',
      event_time: new Date(),
      trigger: 'test',
      status: 'failed',
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const purchase = await startPurchase(server, product.id);
  const recurring = (
    await server.api.post(
      '/products',
      {
        appId: app.id,
        name: 'Monthly',
        price: 5,
        currency: 'USD',
        billingType: 'recurring',
        interval: 'month',
        partnerPriceIdRecurring: 'price_monthly',
      },
      { token: owner.token },
    )
  ).expect(201).body;
  await buyWithSandbox(server, recurring.id, 'sub@example.com');
  const subscription = await server.db
    .selectFrom('subscriptions')
    .select('id')
    .where('product_id', '=', recurring.id)
    .executeTakeFirstOrThrow();
  owned = {
    subscriptionId: subscription.id,
    orderId: purchase.orderId,
    appId: app.id,
    apiKeyId: apiKey.id,
    productId: product.id,
    licenseId: issued.id,
    webhookId: webhook.id,
    deliveryId: delivery.id,
    releaseId: draft.id,
  };

  const sibling = await createApp(server, owner.token, 'Sibling');
  siblingKey = (await createApiKey(server, owner.token, sibling.id)).key;

  // Session tokens that must never pass: expired, unsigned, and of a closed account.
  const claims = JSON.parse(Buffer.from(owner.token.split('.')[1] ?? '', 'base64url').toString());
  const now = Math.floor(Date.now() / 1000);
  expiredToken = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject(owner.user.id)
    .setIssuer(claims.iss)
    .setAudience(claims.aud)
    .setIssuedAt(now - 7200)
    .setExpirationTime(now - 60)
    .sign(new TextEncoder().encode(JWT_SECRET));
  unsignedToken = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${owner.token.split('.')[1]}.`;
  const closed = await signUp(server);
  (await server.api.delete(`/admin/users/${closed.user.id}`, { token: await server.adminToken() })).expect(
    204,
  );
  deletedUserToken = closed.token;

  stranger = await signUp(server);
  const strangerApp = await createApp(server, stranger.token);
  strangerKey = (await createApiKey(server, stranger.token, strangerApp.id)).key;
  const revoked = await createApiKey(server, stranger.token, strangerApp.id, 'revoked');
  (
    await server.api.delete(`/apps/${strangerApp.id}/api-keys/${revoked.id}`, { token: stranger.token })
  ).expect(204);
  revokedKey = revoked.key;

  for (const route of registeredRoutes(server.service.core)) routes.push({ host: 'core', route });
  for (const route of registeredRoutes(server.service.pay)) routes.push({ host: 'pay', route });
});
after(() => server.stop());

const nameOf = (host: string, route: RouteInfo) => `${host} ${route.method} ${route.url}`;
// Route urls carry the full path (with /v1 on the core host), so clients start at the origin.
const call = (
  host: 'core' | 'pay',
  method: string,
  path: string,
  body: unknown,
  options: RequestOptions = {},
) =>
  httpClient(host === 'core' ? server.service.coreUrl : server.service.payUrl).request(
    method,
    path,
    body,
    options,
  );

function concretePath(route: RouteInfo, entry: Entry): string {
  if (entry.kind === 'resource') return entry.path(owned);
  if (entry.kind === 'admin' && entry.path) return entry.path({ userId: owner.user.id });
  return route.url;
}

describe('shared auth suite', () => {
  test('every registered route has an entry, and every entry a route', () => {
    const registered = routes.map(({ host, route }) => nameOf(host, route)).sort();
    assert.deepEqual(registered, Object.keys(ROUTES).sort());
    for (const { host, route } of routes) {
      const entry = ROUTES[nameOf(host, route)];
      assert.equal(route.auth === 'public', entry?.kind === 'public', `${nameOf(host, route)} public-ness`);
    }
  });

  test('every public route says in docs/security.md who may call it and what it reveals', () => {
    // Run from the project's root, as npm test and node --test are.
    const doc = fs.readFileSync(path.join(process.cwd(), 'docs', 'security.md'), 'utf8');
    const undocumented = routes
      .filter(({ route }) => route.auth === 'public' && route.method !== 'OPTIONS')
      .map(({ route }) => `${route.method} ${route.url}`)
      .filter((name) => !doc.includes(name));
    assert.deepEqual(undocumented, [], 'public routes missing from docs/security.md');
  });

  test('protected routes refuse missing, malformed, bad and revoked credentials with 401', async () => {
    for (const { host, route } of routes) {
      const entry = ROUTES[nameOf(host, route)];
      if (!entry || entry.kind === 'public') continue;
      const path = concretePath(route, entry);
      const body = 'body' in entry ? entry.body : undefined;
      const attempts: RequestOptions[] = [
        {},
        { headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` } },
        { token: 'not-a-real-token' },
        { token: `sk_${'0'.repeat(48)}` },
        { token: revokedKey },
        { token: expiredToken },
        { token: unsignedToken },
        { token: deletedUserToken },
      ];
      for (const options of attempts) {
        const refused = await call(host, route.method, path, body, options);
        assertError(refused, 401, 'unauthorized');
        // RFC 6750: the challenge says invalid_token only when a bearer token was sent.
        assert.equal(
          refused.headers.get('www-authenticate'),
          options.token
            ? 'Bearer realm="licensing", error="invalid_token", error_description="The token is invalid, expired or revoked"'
            : 'Bearer realm="licensing"',
          `${nameOf(host, route)} ${options.token ? 'with a token' : 'without one'}`,
        );
      }
    }
  });

  test('admin routes refuse sellers’ tokens and keys with 403', async () => {
    for (const { host, route } of routes) {
      const entry = ROUTES[nameOf(host, route)];
      if (entry?.kind !== 'admin') continue;
      const path = concretePath(route, entry);
      assertError(
        await call(host, route.method, path, entry.body, { token: stranger.token }),
        403,
        'forbidden',
      );
      assertError(await call(host, route.method, path, entry.body, { token: strangerKey }), 403, 'forbidden');
    }
  });

  test('user-token-only routes refuse API keys with 403', async () => {
    for (const { host, route } of routes) {
      const entry = ROUTES[nameOf(host, route)];
      if (route.auth !== 'user' || !entry) continue;
      const path = concretePath(route, entry);
      const body = 'body' in entry ? entry.body : undefined;
      assertError(
        await call(host, route.method, path, body, { token: strangerKey }),
        403,
        'user_token_required',
      );
    }
  });

  test('the owner reads each resource, and a key of another of their apps is refused with 403', async () => {
    for (const { host, route } of routes) {
      const entry = ROUTES[nameOf(host, route)];
      if (entry?.kind !== 'resource') continue;
      const path = entry.path(owned);
      if (route.method === 'GET')
        (await call(host, route.method, path, undefined, { token: owner.token })).expect(200);
      if (route.auth === 'seller') {
        assertError(
          await call(host, route.method, path, entry.body, { token: siblingKey }),
          403,
          'app_scope_mismatch',
        );
      }
    }
  });

  test('another seller’s resources answer 404 and stay unchanged', async () => {
    for (const { host, route } of routes) {
      const entry = ROUTES[nameOf(host, route)];
      if (entry?.kind !== 'resource') continue;
      const path = entry.path(owned);
      assertError(
        await call(host, route.method, path, entry.body, { token: stranger.token }),
        404,
        'not_found',
      );
      if (route.auth === 'seller') {
        assertError(
          await call(host, route.method, path, entry.body, { token: strangerKey }),
          404,
          'not_found',
        );
      }
    }
    const app = (await server.api.get(`/apps/${owned.appId}`, { token: owner.token })).expect(200);
    assert.equal(app.body.name, 'Test App');
    const keys = (await server.api.get(`/apps/${owned.appId}/api-keys`, { token: owner.token })).expect(200);
    assert.equal(keys.body.apiKeys[0].revokedAt, null);
    const product = (await server.api.get(`/products/${owned.productId}`, { token: owner.token })).expect(
      200,
    );
    assert.equal(product.body.name, 'Owned');
  });
});
