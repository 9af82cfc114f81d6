import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import Type, { type TSchema } from 'typebox';
import { AppError, type ErrorCode } from '../errors.js';
import { challengeFor } from './challenges.js';
import type { HttpApp } from './http-app.js';
import { dropAnswer, holdAnswer } from './idempotency.js';
import type { Attempt, Caller, IdempotencyKeys, StoredAnswer } from './idempotency-keys.js';
import type { Principal } from './principal.js';

/*
 * Idempotency-Key on the routes that declare `config: { idempotent: true }` (see idempotency.ts
 * for the whole rule): the header in their schema, a claim before their handler, the answer
 * settled once sent, and the replay of a kept answer.
 */

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';
/** What Fastify writes for a serialized body: the kept answer says the same. */
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/** The optional header as the route schema declares it: validated, and shown in the API reference. */
const KeyHeader = Type.String({
  pattern: '^[\\x20-\\x7E]{1,255}$',
  errorMessage: 'must be 1 to 255 printable ASCII characters',
  description:
    'Makes the request safe to retry: the same key with the same request within 24 hours answers the first answer again, with `Idempotent-Replayed: true`, instead of doing the work twice. Use a new random key (a UUID) per operation.',
});

/**
 * Hooks on one host: a route flagged `idempotent` gets the header in its schema (validated, and
 * shown in the API reference), a claim before its handler, and its answer settled once sent.
 * The hooks are the route's own, so other routes (verify above all) pay nothing for them.
 * `crashAfterCommit` is the crash suite's hook (config refuses it outside NODE_ENV=test).
 */
export function registerIdempotency(
  app: HttpApp,
  keys: IdempotencyKeys,
  options: { crashAfterCommit?: boolean } = {},
): void {
  const attempts = new WeakMap<FastifyRequest, Attempt>();

  async function claim(request: FastifyRequest, reply: FastifyReply, status: number) {
    const key = request.headers[IDEMPOTENCY_KEY_HEADER];
    // The schema has checked the value; an absent header leaves the request as it is.
    if (typeof key !== 'string') return;
    const attempt = keys.attempt(callerOf(request.principal), key, requestText(request));
    const outcome = await keys.claim(attempt);
    switch (outcome.kind) {
      case 'claimed':
        attempts.set(request, attempt);
        holdAnswer(request, {
          async keep(trx, answer) {
            const serialize = reply.getSerializationFunction(String(status));
            await keys.keepInTransaction(trx, attempt, {
              status,
              contentType: JSON_CONTENT_TYPE,
              body: typeof serialize === 'function' ? serialize(answer as never) : JSON.stringify(answer),
              requestId: request.id,
            });
            attempt.kept = true;
          },
        });
        return;
      case 'reused':
        throw new AppError(
          'idempotency_key_reused',
          outcome.why === 'request'
            ? 'Idempotency-Key was already used for a different request; use a new key for a new request'
            : 'Idempotency-Key was already used by a credential that reaches other apps; use a new key',
          [{ field: 'Idempotency-Key', message: 'was already used for a different request' }],
        );
      case 'in_use':
        reply.header('retry-after', String(outcome.retryAfter));
        throw new AppError(
          'idempotency_key_in_use',
          outcome.abandoned
            ? 'The request first sent with this Idempotency-Key did not finish and may have done part of its work; the key is free again after Retry-After seconds. Check what exists before sending the request again with a new key'
            : 'A request with this Idempotency-Key is still in progress; retry after Retry-After seconds',
        );
      case 'replay':
        return replay(request, reply, outcome.answer);
    }
  }

  async function settle(request: FastifyRequest, reply: FastifyReply, payload: unknown) {
    const attempt = attempts.get(request);
    if (!attempt) return payload;
    attempts.delete(request);
    dropAnswer(request);
    if (attempt.kept && reply.statusCode < 400) {
      // The answer committed with the work; the crash suite dies here, before it is sent.
      if (options.crashAfterCommit) process.kill(process.pid, 'SIGKILL');
      return payload;
    }
    const body =
      typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
    try {
      // Both statements touch only a claim still in progress: an answer kept with committed work
      // stays, whatever came after it (a 5xx included).
      if (reply.statusCode >= 500 || body === null) await keys.release(attempt);
      else
        await keys.complete(attempt, {
          status: reply.statusCode,
          contentType: headerText(reply.getHeader('content-type')),
          body,
          requestId: request.id,
        });
    } catch (err) {
      // The answer itself stands; the claim stays in progress until it expires.
      request.log.warn({ err: { message: (err as Error).message } }, 'idempotency.answer.not_kept');
    }
    return payload;
  }

  app.addHook('onRoute', (route) => {
    if (!route.config?.idempotent) return;
    const status = successStatusOf(route);
    route.schema = { ...route.schema, headers: withKeyHeader(route.schema?.headers as TSchema | undefined) };
    // After the route's own hooks: credentials and the body have been checked by then.
    const claimKey = (request: FastifyRequest, reply: FastifyReply) => claim(request, reply, status);
    route.preHandler = [...[route.preHandler ?? []].flat(), claimKey] as RouteOptions['preHandler'];
    route.onSend = [...[route.onSend ?? []].flat(), settle] as RouteOptions['onSend'];
  });
}

/** The one 2xx a creating route declares: the status its kept answer carries. */
function successStatusOf(route: RouteOptions): number {
  const codes = Object.keys(route.schema?.response ?? {}).filter((code) => /^2\d\d$/.test(code));
  if (codes.length !== 1)
    throw new Error(`${route.method} ${route.url}: an idempotent route declares exactly one 2xx response`);
  return Number(codes[0]);
}

function replay(request: FastifyRequest, reply: FastifyReply, answer: StoredAnswer) {
  request.log.info({ originalRequestId: answer.requestId, status: answer.status }, 'idempotency.replayed');
  // The first answer's request id, so an error body's requestId and the header still agree.
  if (answer.requestId) reply.header('x-request-id', answer.requestId);
  if (answer.contentType) reply.header('content-type', answer.contentType);
  // A kept 401 names its challenge again (Location, on a 201, is added by its route's hook).
  if (answer.status === 401) {
    const challenge = challengeFor(errorCodeIn(answer.body), request);
    if (challenge) reply.header('www-authenticate', challenge);
  }
  return reply.code(answer.status).header(REPLAYED_HEADER, 'true').send(answer.body);
}

/** The code of a kept error body. */
function errorCodeIn(body: string): ErrorCode {
  try {
    return (JSON.parse(body) as { error: { code: ErrorCode } }).error.code;
  } catch {
    return 'unauthorized';
  }
}

function withKeyHeader(headers: TSchema | undefined): TSchema {
  if (!headers) return Type.Object({ [IDEMPOTENCY_KEY_HEADER]: Type.Optional(KeyHeader) });
  const declared = headers as TSchema & { properties?: Record<string, TSchema> };
  return { ...declared, properties: { ...declared.properties, [IDEMPOTENCY_KEY_HEADER]: KeyHeader } };
}

function callerOf(principal: Principal | null): Caller {
  if (!principal) return { scope: 'public', appId: null };
  return {
    scope: `seller:${principal.userId}`,
    appId: principal.credential.kind === 'api_key' ? principal.credential.appId : null,
  };
}

/** The request as the route understood it: key order and spacing in the body do not matter. */
function requestText(request: FastifyRequest): string {
  return canonicalJson([
    request.method,
    request.routeOptions.url,
    request.params ?? {},
    request.query ?? {},
    request.body ?? null,
  ]);
}

/** JSON with object keys sorted at every level, so equal values always give equal text. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, current: unknown) => {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return current;
    const entries = Object.entries(current as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return Object.fromEntries(entries);
  });
}

function headerText(value: ReturnType<FastifyReply['getHeader']>): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(', ') : String(value);
}
