import { randomUUID } from 'node:crypto';

/*
 * What every listener of the service answers alike: the two Fastify hosts (create-http-app.ts)
 * and the probe thread's bare node:http listener (modules/health), which must not load Fastify.
 */

/** How long a 503 asks the client to wait before it tries again. */
export const RETRY_AFTER_SECONDS = '5';

const INCOMING_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The caller's X-Request-Id when it is a plain token of at most 128 characters, else a new one. */
export function requestIdOf(incoming: string | string[] | undefined): string {
  return typeof incoming === 'string' && INCOMING_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
