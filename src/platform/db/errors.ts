/**
 * Whether a delete failed because rows elsewhere still reference the row: SQLSTATE 23503
 * (foreign key, NO ACTION) or 23001 (ON DELETE RESTRICT). Both drivers expose the code.
 */
export function isStillReferenced(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '23503' || code === '23001';
}

/**
 * The database could not be reached for this statement (restart, outage, a killed connection, an
 * I/O failure of the embedded store): the statement may not have run, and a retry may succeed.
 * Only the database adapters throw it (database.ts, pglite-pool.ts), so a partner's refused
 * connection is never mistaken for one. Requests answer it with 503 `database_unavailable`.
 */
export class DatabaseUnavailableError extends Error {
  constructor(cause: Error) {
    super(`database unavailable: ${cause.message}`, { cause });
    this.name = 'DatabaseUnavailableError';
  }
}

export function isDatabaseUnavailable(error: unknown): error is DatabaseUnavailableError {
  return error instanceof DatabaseUnavailableError;
}

/** Rethrows a driver failure as DatabaseUnavailableError when it says the server is away. */
export function classifyDriverError(error: unknown): unknown {
  return error instanceof Error && isConnectionFailure(error) ? new DatabaseUnavailableError(error) : error;
}

/**
 * Socket failures on the way to the database server (also inside an AggregateError), and file
 * system failures under the embedded store's data folder.
 */
const NETWORK_CODES = new Set([
  'EIO',
  'ENOSPC',
  'EROFS',
  'EDQUOT',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs that say the server is away or going away, not that the statement was wrong:
 * class 08 (connection exception), class 58 (the server's files failed: the embedded store's
 * data folder gone or unwritable), 57P01–57P03 (admin or crash shutdown, cannot connect now),
 * 53300 (too many connections).
 */
const UNAVAILABLE_STATES = /^(08...|58...|57P0[123]|53300)$/;

/** Messages of `pg` and `pg-pool` for a connection that ended or never came. */
const UNAVAILABLE_MESSAGES =
  /^(Query read timeout|Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Connection terminated due to connection timeout)/;

function isConnectionFailure(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || UNAVAILABLE_STATES.test(code))) return true;
  if (UNAVAILABLE_MESSAGES.test(error.message)) return true;
  // The embedded store's WebAssembly aborted (its memory or files failed): it answers no more.
  if (error.name === 'RuntimeError') return true;
  if (error instanceof AggregateError)
    return error.errors.some((inner) => inner instanceof Error && isConnectionFailure(inner));
  return false;
}
