import Fastify from 'fastify';
import pg from 'pg';

/**
 * Baseline: a bare Fastify POST route making one indexed UPDATE (a license's count, by its key)
 * through a `pg` Pool of the service's size, in its own process: what a write costs at least,
 * beside the seat heartbeat and the usage consume.
 */
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
pool.on('error', () => {});
const app = Fastify();
app.post('/', async (request) => {
  const { key } = request.body as { key: string };
  const { rowCount } = await pool.query('update licenses set uses = uses + 1 where key = $1', [key]);
  return { updated: rowCount === 1 };
});
const url = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening on ${url}/`);
