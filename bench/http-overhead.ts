import Fastify from 'fastify';
import { startTestServer } from '../src/testing/harness.js';
import { AS_IN_PRODUCTION, measure, report } from './lib.js';

/**
 * What our HTTP stack and authentication cost per request, against a bare Fastify route
 * measured in the same run on the same machine.
 */
export async function httpOverhead(): Promise<string> {
  const bare = Fastify();
  bare.get('/', async () => ({ status: 'ok' }));
  await bare.listen({ port: 0, host: '127.0.0.1' });
  const bareUrl = `http://127.0.0.1:${(bare.server.address() as { port: number }).port}/`;

  const server = await startTestServer({ ...AS_IN_PRODUCTION });
  try {
    const api = server.api;
    const email = `bench-${Date.now()}@example.com`;
    const { token } = (await api.post('/auth/register', { email, password: 'benchmark password' })).expect(
      201,
    ).body;
    const app = (await api.post('/apps', { name: 'Bench' }, { token })).expect(201).body;
    const { key } = (await api.post(`/apps/${app.id}/api-keys`, { name: 'bench' }, { token })).expect(
      201,
    ).body;

    const rows = [
      await measure('bare Fastify route (baseline)', { url: bareUrl }),
      await measure('GET /v1/health (our stack, no database)', { url: `${api.baseUrl}/health` }),
      await measure('GET /v1/health/ready (one query)', { url: `${api.baseUrl}/health/ready` }),
      await measure('GET /v1/auth/me with an API key', {
        url: `${api.baseUrl}/auth/me`,
        headers: { authorization: `Bearer ${key}` },
      }),
      await measure('GET /v1/auth/me with a session token', {
        url: `${api.baseUrl}/auth/me`,
        headers: { authorization: `Bearer ${token}` },
      }),
    ];
    const storage = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';
    return report(`HTTP and authentication overhead (${storage})`, rows);
  } finally {
    await server.stop();
    await bare.close();
  }
}
