import { generateKeyPairSync, randomBytes, webcrypto } from 'node:crypto';
import Fastify from 'fastify';

/**
 * Baseline: a bare Fastify POST route (no logging, no validation, no lookup) that answers every
 * request with a fresh RS256 token, signed as the service signs one: the protected header
 * encoded once, the claims serialized and base64url-encoded per request, the signature by
 * WebCrypto on libuv's thread pool. What an HTTP route that signs can reach on this machine with
 * this load generator beside it, so P1's and P4's distance from their goals can be read against
 * what any service could do here, not only against signing alone.
 */
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const key = await webcrypto.subtle.importKey(
  'pkcs8',
  privateKey.export({ type: 'pkcs8', format: 'der' }),
  { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
  false,
  ['sign'],
);
const header = Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: 'bench' })).toString('base64url');

const app = Fastify();
app.post('/', async (request) => {
  const iat = Math.floor(Date.now() / 1000);
  const claims = {
    token_use: 'service_license_v1',
    svc_vt: 'basic',
    seller_tier: 'pro',
    status: 'ACTIVE',
    hw_bound: true,
    iss: 'http://localhost/v1',
    sub: String((request.body as { key?: unknown }).key),
    aud: 'bench',
    iat,
    nbf: iat,
    exp: iat + 900,
    jti: randomBytes(24).toString('base64url'),
  };
  const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  const signature = await webcrypto.subtle.sign('RSASSA-PKCS1-v1_5', key, Buffer.from(input));
  return {
    valid: true,
    license_token: `${input}.${Buffer.from(signature).toString('base64url')}`,
    license_token_expires_at: new Date(claims.exp * 1000).toISOString(),
  };
});
const url = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening on ${url}/`);
