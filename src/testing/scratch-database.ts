import { randomBytes } from 'node:crypto';
import pg from 'pg';

/**
 * A database of its own for a test file whose servers run background workers or move their
 * clocks far, so they cannot act on other files' rows in the shared test database. Without
 * DATABASE_URL (PGlite) every server is in memory anyway: nothing to do.
 */
export async function scratchDatabase(): Promise<{ url: string | undefined; drop(): Promise<void> }> {
  const shared = process.env.DATABASE_URL;
  if (!shared) return { url: undefined, drop: async () => {} };
  const name = `licensing_scratch_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: shared });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(shared);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    async drop() {
      const client = new pg.Client({ connectionString: shared });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}
