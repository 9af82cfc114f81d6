import { generateKeyPairSync } from 'node:crypto';
import Fastify from 'fastify';
import { SignJWT } from 'jose';
import { startTestServer } from '../src/testing/harness.js';
import { AS_IN_PRODUCTION, measure, report } from './lib.js';

/**
 * The verify hot path: with and without token issuance, and for a device already bound, beside
 * a bare Fastify route and raw RS256 signing measured in the same run.
 */
export async function verifyPath(): Promise<string> {
  const bare = Fastify();
  bare.post('/', async () => ({ valid: true }));
  await bare.listen({ port: 0, host: '127.0.0.1' });
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}/`;

  const withTokens = await startTestServer({ ...AS_IN_PRODUCTION });
  const withoutTokens = await startTestServer({ ...AS_IN_PRODUCTION, LICENSE_TOKENS: 'off' });
  try {
    const keyOn = await setUp(withTokens);
    const keyOff = await setUp(withoutTokens);
    const post = (url: string, body: unknown) => ({
      url,
      method: 'POST' as const,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const rows = [
      await measure('bare Fastify POST route (baseline)', post(bareUrl, { key: keyOn })),
      await measure(
        'verify, no token (LICENSE_TOKENS=off)',
        post(`${withoutTokens.api.baseUrl}/licenses/verify`, { key: keyOff }),
      ),
      await measure(
        'verify with a signed token',
        post(`${withTokens.api.baseUrl}/licenses/verify`, { key: keyOn }),
      ),
      await measure(
        'verify with a bound device and a token',
        post(`${withTokens.api.baseUrl}/licenses/verify`, { key: keyOn, hwuid: 'bench-pc' }),
      ),
    ];
    const signing = await rawSigning();
    const storage = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';
    return `${report(`Verify path (${storage})`, rows)}\n\nRaw RS256 signing in this process (jose): ${signing} tokens/s on one core.`;
  } finally {
    await Promise.all([withTokens.stop(), withoutTokens.stop(), bare.close()]);
  }
}

async function setUp(server: Awaited<ReturnType<typeof startTestServer>>): Promise<string> {
  const { token } = (
    await server.api.post('/auth/register', {
      email: `bench-${Date.now()}@example.com`,
      password: 'benchmark password',
    })
  ).expect(201).body;
  const app = (await server.api.post('/apps', { name: 'Bench' }, { token })).expect(201).body;
  const license = (
    await server.api.post(
      `/apps/${app.id}/licenses`,
      { metadata: { plan: 'pro', features: ['a', 'b'] } },
      { token },
    )
  ).expect(201).body;
  return license.key;
}

async function rawSigning(): Promise<number> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const claims = { token_use: 'service_license_v1', svc_vt: 'basic', status: 'ACTIVE', hw_bound: false };
  const sign = () =>
    new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: 'bench' })
      .setSubject('x')
      .setIssuedAt()
      .setExpirationTime('15m')
      .sign(privateKey);
  for (let i = 0; i < 50; i++) await sign();
  const count = 2000;
  const started = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await sign();
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return Math.round(count / seconds);
}
