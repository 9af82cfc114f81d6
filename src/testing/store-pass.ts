/**
 * CI runs the suite twice, on PGlite and again on PostgreSQL (.ci/run). What a test proves without
 * touching the store (the SDK's packed tarball, the Python package's build, a page rendered from
 * the route table) cannot come out differently on the second pass: it runs in the PGlite pass
 * only, as `describe(name, { skip: PGLITE_PASS_ONLY }, …)`.
 */
export const PGLITE_PASS_ONLY: string | false = process.env.DATABASE_URL
  ? 'does not touch the store: runs in the pass without DATABASE_URL'
  : false;
