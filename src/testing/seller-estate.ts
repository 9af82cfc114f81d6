import { sql } from 'kysely';
import sharp from 'sharp';
import type { Db } from '../platform/db/database.js';
import { newId } from '../platform/ids.js';
import { createApiKey, createApp, type Seller, signUp, type TestServer, uniqueSuffix } from './harness.js';
import { buyWithSandbox } from './purchases.js';

/**
 * One seller with one of everything the API can address by id: the owner whose data the
 * generated suites (hostile input, tenant isolation) aim at. Every name and e-mail carries
 * `marker`, so a response that shows any of them is found by searching for the marker.
 */
export interface SellerEstate {
  marker: string;
  seller: Seller;
  /** The key the suites authenticate with; never addressed by a path, so no case revokes it. */
  apiKey: string;
  ids: {
    userId: string;
    appId: string;
    apiKeyId: string;
    productId: string;
    recurringProductId: string;
    licenseId: string;
    hwuid: string;
    webhookId: string;
    webhookDeliveryId: string;
    merchantDeliveryId: string;
    orderId: string;
    transactionId: string;
    subscriptionId: string;
    disputeId: string;
    releaseId: string;
    artifactFilename: string;
    artifactId: string;
    /** The brand's public id (its logo's address). */
    brandId: string;
  };
  secrets: {
    licenseKey: string;
    callbackSecret: string;
    orderClientSecret: string;
    pathApiKey: string;
  };
  buyerEmail: string;
}

/** The version of the estate's one release. */
const ESTATE_RELEASE_VERSION = '1.0.0';

export async function createSellerEstate(
  server: TestServer,
  options: { webhookUrl: string; marker?: string },
): Promise<SellerEstate> {
  const marker = options.marker ?? `estate${uniqueSuffix()}`;
  const seller = await signUp(server, { tier: 'enterprise', email: `owner-${marker}@test.example` });
  const { token } = seller;
  const app = await createApp(server, token, `App ${marker}`);
  const apiKey = await createApiKey(server, token, app.id, `Key ${marker}`);
  const pathKey = await createApiKey(server, token, app.id, `Addressed ${marker}`);
  // Published, so each of its routes (publish, yank, change) has something to refuse a stranger.
  const release = (
    await server.api.post(
      `/apps/${app.id}/releases`,
      { version: ESTATE_RELEASE_VERSION, notes: `Notes ${marker}` },
      { token },
    )
  ).expect(201).body;
  const artifactFilename = `${marker}.zip`;
  const artifact = (
    await server.api.put(`/apps/${app.id}/releases/${release.id}/artifacts/${artifactFilename}`, undefined, {
      token,
      headers: { 'content-type': 'application/octet-stream' },
      raw: `bytes of ${marker}`,
    })
  ).expect(201).body;
  // A file the seller hosts: its address carries the marker, so an answer that shows it is found.
  (
    await server.api.post(
      `/apps/${app.id}/releases/${release.id}/artifacts`,
      {
        filename: `${marker}-hosted.dmg`,
        platform: 'macos',
        url: `https://downloads.example.com/${marker}.dmg`,
      },
      { token },
    )
  ).expect(201);
  (await server.api.post(`/apps/${app.id}/releases/${release.id}/publish`, {}, { token })).expect(200);
  // A brand with every part: its name on the seller's pages, a logo, sites that may frame them.
  const brand = (
    await server.api.put(
      '/brand',
      {
        displayName: `Brand ${marker}`,
        accentColor: '#336699',
        overlayOrigins: ['https://shop.example.com'],
      },
      { token },
    )
  ).expect(200).body;
  const logo = await sharp({ create: { width: 60, height: 20, channels: 3, background: '#336699' } })
    .png()
    .toBuffer();
  (
    await server.api.put('/brand/logo', undefined, {
      token,
      headers: { 'content-type': 'image/png' },
      raw: logo,
    })
  ).expect(200);
  const product = (
    await server.api.post(
      '/products',
      {
        appId: app.id,
        name: `Product ${marker}`,
        price: 5,
        currency: 'USD',
        successUrl: 'https://seller.example.com/thanks',
        merchantWebhookUrl: options.webhookUrl,
      },
      { token },
    )
  ).expect(201).body;
  const recurring = (
    await server.api.post(
      '/products',
      {
        appId: app.id,
        name: `Monthly ${marker}`,
        price: 5,
        currency: 'USD',
        billingType: 'recurring',
        interval: 'month',
        partnerPriceIdRecurring: 'price_monthly',
      },
      { token },
    )
  ).expect(201).body;
  const license = (
    await server.api.post(
      `/apps/${app.id}/licenses`,
      { email: `licensee-${marker}@test.example`, maxDevices: 3, metadata: { plan: `Plan ${marker}` } },
      { token },
    )
  ).expect(201).body;
  const hwuid = `device-${marker}`;
  (await server.api.post('/licenses/verify', { key: license.key, hwuid })).expect(200);
  const webhook = (
    await server.api.post(
      '/webhooks',
      { url: options.webhookUrl, events: ['license.created'], appId: app.id },
      { token },
    )
  ).expect(201).body;
  const buyerEmail = `buyer-${marker}@test.example`;
  const { intent } = await buyWithSandbox(server, product.id, buyerEmail);
  await buyWithSandbox(server, recurring.id, buyerEmail);
  const subscription = await server.db
    .selectFrom('subscriptions')
    .select('id')
    .where('product_id', '=', recurring.id)
    .executeTakeFirstOrThrow();
  const merchantEndpointId = newId();
  await server.db
    .insertInto('webhook_endpoints')
    .values({
      id: merchantEndpointId,
      user_id: seller.user.id,
      app_id: app.id,
      kind: 'merchant',
      product_id: product.id,
      url: options.webhookUrl,
      events: ['order.paid'],
      secret: '',
    })
    .onConflict((oc) => oc.column('product_id').where('kind', '=', 'merchant').doNothing())
    .execute();
  const merchantEndpoint = await server.db
    .selectFrom('webhook_endpoints')
    .select('id')
    .where('product_id', '=', product.id)
    .where('kind', '=', 'merchant')
    .executeTakeFirstOrThrow();
  const delivery = (endpointId: string, type: string) => ({
    id: newId(),
    endpoint_id: endpointId,
    event_id: null,
    event_type: type,
    payload: JSON.stringify({ marker }),
    event_time: new Date(),
    trigger: 'test' as const,
    status: 'failed' as const,
  });
  const webhookDelivery = delivery(webhook.id, 'webhook.test');
  const merchantDelivery = delivery(merchantEndpoint.id, 'order.paid');
  await server.db.insertInto('webhook_deliveries').values([webhookDelivery, merchantDelivery]).execute();
  const disputeId = newId();
  await server.db
    .insertInto('disputes')
    .values({
      id: disputeId,
      partner_dispute_id: `dp_${marker}`,
      order_id: intent.orderId,
      user_id: seller.user.id,
      app_id: app.id,
      status: 'needs_response',
      amount: '5',
      currency: 'usd',
      reason: 'fraudulent',
      evidence_due_by: null,
    })
    .execute();
  const callbackSecret = await server.db
    .selectFrom('products')
    .select('callback_secret')
    .where('id', '=', product.id)
    .executeTakeFirstOrThrow();
  return {
    marker,
    seller,
    apiKey: apiKey.key,
    ids: {
      userId: seller.user.id,
      appId: app.id,
      apiKeyId: pathKey.id,
      productId: product.id,
      recurringProductId: recurring.id,
      licenseId: license.id,
      hwuid,
      webhookId: webhook.id,
      webhookDeliveryId: webhookDelivery.id,
      merchantDeliveryId: merchantDelivery.id,
      orderId: intent.orderId,
      transactionId: intent.transactionId,
      subscriptionId: subscription.id,
      disputeId,
      releaseId: release.id,
      artifactFilename,
      artifactId: artifact.id,
      brandId: brand.id,
    },
    secrets: {
      licenseKey: license.key,
      callbackSecret: callbackSecret.callback_secret,
      orderClientSecret: intent.clientSecret,
      pathApiKey: pathKey.key,
    },
    buyerEmail,
  };
}

/**
 * Which of the estate's ids a path parameter names, from the collection the parameter follows
 * (`/products/:id` → the product). A parameter named after its resource (`:appId`) is read the
 * same way. A new collection fails loudly, so a new route is mapped or listed on purpose.
 */
const ID_OF_COLLECTION: Record<string, keyof SellerEstate['ids']> = {
  users: 'userId',
  apps: 'appId',
  'api-keys': 'apiKeyId',
  licenses: 'licenseId',
  devices: 'hwuid',
  seats: 'hwuid',
  products: 'productId',
  checkout: 'productId',
  webhooks: 'webhookId',
  orders: 'orderId',
  disputes: 'disputeId',
  subscriptions: 'subscriptionId',
  releases: 'releaseId',
  artifacts: 'artifactFilename',
  // A download link: /releases/files/:artifactId/:filename (the file name follows the id).
  files: 'artifactId',
  ':artifactId': 'artifactFilename',
  // A buyer portal download: /portal/licenses/:licenseId/downloads/:artifactId.
  downloads: 'artifactId',
  // Updater feeds: /releases/feeds/:appId/…, their files /…/files/:version/:filename.
  feeds: 'appId',
  ':version': 'artifactFilename',
  brands: 'brandId',
  // A buyer portal sign-in link's token: no estate holds one, so any id stands for an unknown token.
  'sign-in': 'licenseId',
};

/**
 * Path parameters that name no resource of the estate but what an updater of its app sends: a
 * channel file, a target, an architecture, the version it runs, the version of the estate's
 * release.
 */
const VALUE_OF_PARAMETER: Record<string, string> = {
  channelFile: 'latest.yml',
  target: 'linux',
  arch: 'x86_64',
  currentVersion: '0.0.1',
  version: ESTATE_RELEASE_VERSION,
};

export function estateIdFor(
  estate: Pick<SellerEstate, 'ids'>,
  routeUrl: string,
  param: string,
  ids: Partial<SellerEstate['ids']> = {},
): string {
  const value = VALUE_OF_PARAMETER[param];
  if (value !== undefined) return value;
  const segments = routeUrl.split('/');
  const at = segments.indexOf(`:${param}`);
  const collection = segments[at - 1] ?? '';
  const all = { ...estate.ids, ...ids };
  // A delivery belongs to the endpoint the path goes through: a product's merchant webhook or a webhook.
  if (collection === 'deliveries')
    return routeUrl.includes('/merchant-webhook/') ? all.merchantDeliveryId : all.webhookDeliveryId;
  const key = ID_OF_COLLECTION[collection];
  if (at < 0 || !key) {
    throw new Error(
      `No id of the seller's estate for :${param} in ${routeUrl}: add its collection "${collection}" to ID_OF_COLLECTION in src/testing/seller-estate.ts (and the resource to createSellerEstate)`,
    );
  }
  return all[key];
}

/** The route url with every `:param` replaced by the estate's id for it. */
export function estatePath(
  estate: Pick<SellerEstate, 'ids'>,
  routeUrl: string,
  ids: Partial<SellerEstate['ids']> = {},
): string {
  return routeUrl.replace(/:([A-Za-z0-9_]+)/g, (_match, param: string) =>
    encodeURIComponent(estateIdFor(estate, routeUrl, param, ids)),
  );
}

/** Everything of the estate a stranger must never see: ids, keys, secrets, and the marker in names. */
export function estateMarkers(estate: SellerEstate): string[] {
  return [
    estate.marker,
    estate.seller.user.email,
    estate.buyerEmail,
    estate.apiKey,
    ...Object.values(estate.ids),
    ...Object.values(estate.secrets),
  ];
}

/**
 * A digest of every row the given users own or that points at their apps or products, table by
 * table: count and an md5 of the rows. A refused request must leave it as it was. The API keys'
 * last use is left out: using a key to make a call is not a change the caller asked for.
 */
export async function snapshotRows(db: Db, userIds: readonly string[]): Promise<Record<string, string>> {
  const users = sql`(${sql.join(userIds.map((id) => sql`${id}::uuid`))})`;
  const apps = sql`(select id from apps where user_id in ${users})`;
  const products = sql`(select id from products where user_id in ${users} or app_id in ${apps})`;
  const licenses = sql`(select id from licenses where user_id in ${users} or app_id in ${apps})`;
  const endpoints = sql`(select id from webhook_endpoints where user_id in ${users} or app_id in ${apps} or product_id in ${products})`;
  const orders = sql`(select id from orders where user_id in ${users} or product_id in ${products})`;
  const scopes: [string, ReturnType<typeof sql>][] = [
    ['users', sql`id in ${users}`],
    ['apps', sql`user_id in ${users}`],
    ['api_keys', sql`user_id in ${users} or app_id in ${apps}`],
    ['products', sql`id in ${products}`],
    ['licenses', sql`id in ${licenses} or product_id in ${products}`],
    ['license_devices', sql`license_id in ${licenses}`],
    ['buyer_device_releases', sql`license_id in ${licenses}`],
    ['revoked_tokens', sql`license_id in ${licenses}`],
    ['webhook_endpoints', sql`id in ${endpoints}`],
    ['webhook_deliveries', sql`endpoint_id in ${endpoints}`],
    ['webhook_attempts', sql`endpoint_id in ${endpoints}`],
    ['orders', sql`id in ${orders} or app_id in ${apps}`],
    ['subscriptions', sql`user_id in ${users} or app_id in ${apps} or product_id in ${products}`],
    ['disputes', sql`user_id in ${users} or app_id in ${apps} or order_id in ${orders}`],
    ['events', sql`user_id in ${users} or app_id in ${apps}`],
    ['notifications', sql`to_user_id in ${users}`],
    ['releases', sql`user_id in ${users} or app_id in ${apps}`],
    ['release_artifacts', sql`user_id in ${users} or app_id in ${apps}`],
    [
      'release_artifact_downloads',
      sql`artifact_id in (select id from release_artifacts where user_id in ${users} or app_id in ${apps})`,
    ],
    ['seller_brands', sql`user_id in ${users}`],
  ];
  // Left out: what background flushes write whatever a request does (an API key's last use, a
  // license's last verification).
  const selects = scopes.map(
    ([table, where]) =>
      sql`select ${table}::text as name, count(*)::int as rows, coalesce(md5(string_agg(r, '|' order by r)), '') as digest from (select (to_jsonb(t) - 'last_used_at' - 'last_verified_at')::text as r from ${sql.table(table)} t where ${where}) s`,
  );
  const result = await sql<{ name: string; rows: number; digest: string }>`${sql.join(
    selects,
    sql` union all `,
  )}`.execute(db);
  return Object.fromEntries(result.rows.map((row) => [row.name, `${row.rows}:${row.digest}`]));
}

/** The tables whose digest differs between two snapshots. */
export function changedTables(before: Record<string, string>, after: Record<string, string>): string[] {
  return Object.keys(before).filter((table) => before[table] !== after[table]);
}

/**
 * Request fields that name one of the estate's resources, by the names the schemas use: what a
 * caller who knows the estate's ids would put in a body or query.
 */
export function estateFields(estate: SellerEstate): Record<string, unknown> {
  const { ids, secrets } = estate;
  return {
    appId: ids.appId,
    productId: ids.productId,
    licenseId: ids.licenseId,
    webhookId: ids.webhookId,
    orderId: ids.orderId,
    order: ids.orderId,
    subscriptionId: ids.subscriptionId,
    subscription_id: ids.subscriptionId,
    transaction: ids.transactionId,
    transactionsId: [ids.transactionId],
    hwuid: ids.hwuid,
    key: secrets.licenseKey,
    license: secrets.licenseKey,
  };
}
