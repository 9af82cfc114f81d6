import type { FastifyRequest } from 'fastify';
import type { ClientCall } from './journal.js';

/** Where a client's call came from and the version it says it is, for the license's timeline. */
export function clientCallOf(request: FastifyRequest): ClientCall {
  const version = request.headers['x-app-version'];
  return { address: request.ip, appVersion: typeof version === 'string' ? version : null };
}
