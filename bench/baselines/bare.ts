import Fastify from 'fastify';

/** Baseline: a bare Fastify POST route (JSON in, JSON out, no logging), in its own process. */
const app = Fastify();
app.post('/', async (request) => ({ valid: typeof (request.body as { key?: unknown }).key === 'string' }));
const url = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening on ${url}/`);
