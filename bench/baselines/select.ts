import Fastify from 'fastify';
import pg from 'pg';

/**
 * Baseline: a bare Fastify POST route making one indexed SELECT (the license by its key) through
 * a `pg` Pool of the service's size, in its own process: what the database costs verify.
 */
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
pool.on('error', () => {});
const app = Fastify();
app.post('/', async (request) => {
  const { key } = request.body as { key: string };
  const { rows } = await pool.query('select id, app_id, status, expires_at from licenses where key = $1', [
    key,
  ]);
  return { valid: rows.length === 1 };
});
const url = await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`listening on ${url}/`);
