import type { Compilable, CompiledQuery, QueryResult } from 'kysely';
import type { Executor } from './executor.js';

/**
 * Statements run thousands of times a second (the verification lookup on a cache miss) or in the
 * background all the time (the cache's refresh) are built by Kysely once, not per call, and
 * prepared once per connection, so neither Kysely's builder nor the database's parser and planner
 * run again. Written here because Kysely has no parameterised prepared statements: the query is
 * compiled with a marker value per parameter, and each call puts its values in the markers' places.
 *
 * The SQL ends with `/* prepared:<name> *\/`; the pg adapter (database.ts) sends such a statement
 * under that name, and so does the PGlite adapter (pglite-pool.ts), on its one connection. A
 * pooler in transaction mode needs prepared-statement support (PgBouncer ≥ 1.21 with
 * max_prepared_statements).
 */
export interface PreparedStatement<P extends string, R> {
  run(executor: Executor, values: Record<P, unknown>): Promise<QueryResult<R>>;
}

const MARKER = '\u0000prepared-parameter:';
const SUFFIX_START = '/* prepared:';

export function preparedStatement<P extends string, R>(
  name: string,
  parameters: readonly P[],
  build: (executor: Executor, markers: Record<P, string>) => Compilable<R>,
): PreparedStatement<P, R> {
  // PostgreSQL cuts names at 63 bytes: two longer names could meet as one.
  if (!/^[a-z0-9_]{1,63}$/.test(name)) {
    throw new Error(`prepared statement name ${name} must be 1-63 characters of [a-z0-9_]`);
  }
  let compiled: { query: CompiledQuery<R>; slots: ((values: Record<P, unknown>) => unknown)[] } | null = null;
  const compile = (executor: Executor) => {
    const markers = Object.fromEntries(parameters.map((p) => [p, `${MARKER}${p}`])) as Record<P, string>;
    const query = build(executor, markers).compile();
    const slots = query.parameters.map((value) => {
      const parameter =
        typeof value === 'string' && value.startsWith(MARKER) ? value.slice(MARKER.length) : null;
      if (parameter === null) return () => value;
      if (!parameters.includes(parameter as P)) throw new Error(`unknown parameter ${parameter} in ${name}`);
      return (values: Record<P, unknown>) => values[parameter as P];
    });
    // Every dialect here is PostgreSQL's, so the text compiled once serves every executor.
    return { query: { ...query, sql: `${query.sql} /* prepared:${name} */` }, slots };
  };
  return {
    run(executor, values) {
      compiled ??= compile(executor);
      const { query, slots } = compiled;
      return executor.executeQuery<R>({ ...query, parameters: slots.map((slot) => slot(values)) });
    },
  };
}

/** For the pg adapter: the statement as pg prepares it (by name), or null for an ordinary one. */
export function namedStatement(
  sql: unknown,
  values: unknown,
): { name: string; text: string; values: unknown[] } | null {
  if (typeof sql !== 'string' || !sql.endsWith(' */')) return null;
  const start = sql.lastIndexOf(SUFFIX_START);
  if (start < 0) return null;
  const name = sql.slice(start + SUFFIX_START.length, -3);
  return { name, text: sql, values: (values as unknown[] | undefined) ?? [] };
}
