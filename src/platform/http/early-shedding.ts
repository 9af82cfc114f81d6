import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { ERROR_STATUS } from '../errors.js';
import type { Log } from '../log.js';
import { RETRY_AFTER_SECONDS, requestIdOf } from './conventions.js';
import { EXPOSED_HEADERS } from './cors.js';

/** Paths answered whatever the load (the routes marked alwaysAnswer): probes see a busy node as alive. */
const ALWAYS_ANSWERED = new Set(['/healthz', '/readyz', '/v1/health', '/v1/health/ready']);
/** How often the count of requests shed before routing is logged while it grows. */
const SHED_LOG_EVERY_MS = 10_000;

/**
 * Shedding before Fastify sees the request. Past its capacity (the event-loop signal of
 * create-http-app.ts and the in-flight bound) a node refused new requests with the same 503 from
 * Fastify's first hook, but the routing, request objects and hooks that refusal ran cost enough that a burst of
 * 2,000 connections left hundreds of clients timing out where a bare node:http server answering 503
 * lost none (docs/performance.md, "Memory and overload"). Here the listener's own request handler
 * answers them, with the same body and headers, before any of that; metrics see none of these
 * (they never reach a route), so their count is logged instead.
 */
export class EarlyShedding {
  private readonly signals: (() => boolean)[] = [];
  private shed = 0;
  private loggedAt = 0;

  constructor(private readonly log: Log) {}

  /** Adds a signal: while any says so, new requests are shed. */
  watch(overloaded: () => boolean): void {
    this.signals.push(overloaded);
  }

  sheds(req: IncomingMessage): boolean {
    if (this.signals.length === 0 || !this.signals.some((overloaded) => overloaded())) return false;
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    if (ALWAYS_ANSWERED.has(query === -1 ? url : url.slice(0, query))) return false;
    this.shed++;
    const now = Date.now();
    if (now - this.loggedAt >= SHED_LOG_EVERY_MS) {
      this.loggedAt = now;
      this.log.warn({ shed: this.shed }, 'http.overloaded.shed');
    }
    return true;
  }
}

/** 503 overloaded, as a route's error answers it, for a request shed before routing. */
export function answerOverloaded(req: IncomingMessage, res: ServerResponse): void {
  const requestId = requestIdOf(req.headers['x-request-id']);
  const body = JSON.stringify({
    error: { code: 'overloaded', message: 'The service is over capacity; retry shortly', requestId },
  });
  const headers: OutgoingHttpHeaders = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
    'retry-after': RETRY_AFTER_SECONDS,
  };
  // The routes pages may call (all under /v1/licenses/) answer their failures with CORS headers.
  if (req.url?.startsWith('/v1/licenses/')) {
    headers['access-control-allow-origin'] = '*';
    headers['access-control-expose-headers'] = EXPOSED_HEADERS;
  }
  res.writeHead(ERROR_STATUS.overloaded, headers);
  res.end(body);
}
