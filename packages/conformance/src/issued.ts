import { SignJWT } from 'jose';
import { bodySignature } from '../../../src/modules/webhooks/webhook-signature.js';
import {
  issueLicense,
  signUp,
  storedSigningKey,
  type TestServer,
  uniqueSuffix,
} from '../../../src/testing/harness.js';
import { startReceiver } from '../../../src/testing/receiver.js';
import { publishRelease } from '../../../src/testing/releases.js';
import { createOfflineActivationRequest } from '../../client/src/license-file.js';
import { claimsOf, headerOf } from './tampering.js';
import type { JsonWebKeySet } from './vectors.js';

/**
 * What the real service hands out for one app, fetched through its HTTP API: the inputs every
 * vector starts from. The service's clock is a test clock, so issue times are the same each run.
 */
export interface Issued {
  algorithm: 'RS256' | 'EdDSA';
  appId: string;
  keySet: JsonWebKeySet;
  /** From POST /licenses/verify. */
  licenseToken: string;
  /** From POST /licenses/checkout on a floating license. */
  seatToken: string;
  /** From POST /licenses/offline-activations, and the request's nonce and device. */
  licenseFile: { file: string; nonce: string; hwuid: string; licenseId: string };
  encryptedFile: { file: string; nonce: string; hwuid: string; licenseKey: string; otherKey: string };
  /** A file of a license with check-in days (its check_in_by). */
  checkInFile: { file: string; hwuid: string };
  /** From GET /licenses/revocations: before and after a second license is revoked. */
  revocationLists: { older: { list: string; version: number }; newer: { list: string; version: number } };
  revokedIds: string[];
  /** A license token re-signed by the service's own token key with other claims. */
  resigned(change: Record<string, unknown>, drop?: string[]): Promise<string>;
  /** From POST /releases/upgrade: a published file's signed manifest, and the file's bytes. */
  manifest: { manifest: string; bytes: Buffer; version: string; filename: string };
  /** The manifest's claims changed and signed again by the service's key `use` signs with. */
  resignedManifest(
    use: 'offline' | 'token',
    change: Record<string, unknown>,
    drop?: string[],
  ): Promise<string>;
}

export interface Delivery {
  secret: string;
  body: string;
  headers: Record<string, string>;
  /** A body the service's signing code signs that is not JSON. */
  signBody(body: string): string;
}

export async function issueForApp(server: TestServer, algorithm: 'RS256' | 'EdDSA'): Promise<Issued> {
  const seller = await signUp(server);
  const app = (
    await server.api.post(
      '/apps',
      { name: `Conformance ${algorithm}`, tokenAlgorithm: algorithm },
      { token: seller.token },
    )
  ).expect(201).body as { id: string };
  const owner = { token: seller.token, appId: app.id };
  const post = async (url: string, body: Record<string, unknown>, token?: string) =>
    (await server.api.post(url, body, token ? { token } : {})).expect(200).body;
  const activate = async (key: string, hwuid: string, encrypt = false) => {
    const written = createOfflineActivationRequest({ key, hwuid, appId: app.id });
    const answer = await post(
      '/licenses/offline-activations',
      { request: written.request, encrypt },
      seller.token,
    );
    return { file: answer.licenseFile as string, nonce: written.nonce, hwuid };
  };

  const license = await issueLicense(server, owner, { metadata: { plan: 'pro' } });
  const licenseToken = (
    await post('/licenses/verify', { key: license.key, hwuid: 'device-a', appId: app.id })
  ).license_token as string;
  const floating = await issueLicense(server, owner, { floating: true, maxSeats: 1, leaseSeconds: 300 });
  const seatToken = (
    await post('/licenses/checkout', { key: floating.key, hwuid: 'device-a', appId: app.id })
  ).license_token as string;
  const licenseFile = { ...(await activate(license.key, 'device-a')), licenseId: license.id as string };
  const sealed = await issueLicense(server, owner);
  const other = await issueLicense(server, owner);
  const encrypted = await activate(sealed.key, 'device-b', true);
  const checkIn = await issueLicense(server, owner, { checkInDays: 7, graceDays: 0 });
  const checkInFile = await activate(checkIn.key, 'device-c');

  const revoke = async (id: string) => post(`/apps/${app.id}/licenses/${id}/revoke`, {}, seller.token);
  const list = async () => {
    const body = (await server.api.get(`/licenses/revocations?appId=${app.id}`)).expect(200).body;
    return { list: body.revocationList as string, version: body.version as number };
  };
  const first = await issueLicense(server, owner);
  const second = await issueLicense(server, owner);
  await revoke(first.id);
  const older = await list();
  await revoke(second.id);
  const newer = await list();

  // A small file, so the vectors carry its bytes.
  const bytes = Buffer.from(Array.from({ length: 300 }, (_, i) => (i * 7 + 3) % 256));
  await publishRelease(server, owner, '1.2.0', { 'conformance-1.2.0.zip': { bytes, platform: 'linux' } });
  const upgrade = await post('/releases/upgrade', {
    appId: app.id,
    key: license.key,
    hwuid: 'device-a',
    currentVersion: '1.0.0',
  });
  const manifest = {
    manifest: upgrade.artifacts[0].manifest as string,
    bytes,
    version: upgrade.release.version as string,
    filename: upgrade.artifacts[0].filename as string,
  };

  const keySet = (await server.api.get('/licenses/jwks')).expect(200).body as JsonWebKeySet;
  const resign = async (jws: string, kid: string, change: Record<string, unknown>, drop: string[]) => {
    const claims: Record<string, unknown> = { ...claimsOf(jws), ...change };
    for (const name of drop) delete claims[name];
    return new SignJWT(claims)
      .setProtectedHeader({ alg: headerOf(jws).alg, kid })
      .sign(await storedSigningKey(server, kid));
  };
  return {
    algorithm,
    appId: app.id,
    keySet,
    licenseToken,
    seatToken,
    licenseFile,
    encryptedFile: {
      ...encrypted,
      licenseKey: sealed.key.toLowerCase().replace(/-/g, ''),
      otherKey: other.key,
    },
    checkInFile,
    revocationLists: { older, newer },
    revokedIds: [first.id, second.id],
    resigned: (change, drop = []) => resign(licenseToken, headerOf(licenseToken).kid, change, drop),
    manifest,
    resignedManifest: (use, change, drop = []) =>
      resign(
        manifest.manifest,
        headerOf(use === 'offline' ? manifest.manifest : licenseToken).kid,
        change,
        drop,
      ),
  };
}

/** One real delivery of the service's webhook sender, as the receiver got it. */
export async function deliverWebhook(server: TestServer): Promise<Delivery> {
  const receiver = await startReceiver();
  try {
    const seller = await signUp(server);
    const webhook = (
      await server.api.post(
        '/webhooks',
        { url: `${receiver.url}/conformance-${uniqueSuffix()}`, events: ['license.created'] },
        { token: seller.token },
      )
    ).expect(201).body as { id: string; secret: string };
    const app = (await server.api.post('/apps', { name: 'Hooks' }, { token: seller.token })).expect(201).body;
    await issueLicense(server, { token: seller.token, appId: app.id }, { email: 'buyer@example.com' });
    const before = receiver.requests.length;
    await server.service.modules.deliveryWorker.runOnce();
    const [request] = (await receiver.waitFor(before + 1)).slice(before);
    if (!request) throw new Error('the service delivered nothing');
    const headers: Record<string, string> = {};
    for (const name of [
      'content-type',
      'x-webhook-id',
      'x-webhook-signature',
      'x-webhook-timestamp',
      'webhook-id',
      'webhook-timestamp',
      'webhook-signature',
    ]) {
      headers[name] = String(request.headers[name]);
    }
    return {
      secret: webhook.secret,
      body: request.body,
      headers,
      signBody: (body) => bodySignature(webhook.secret, body),
    };
  } finally {
    await receiver.close();
  }
}
