import type { RouteOptions } from 'fastify';
import Type, { type TSchema } from 'typebox';
import { ERROR_STATUS, type ErrorCode } from '../errors.js';
import { challengeText } from './challenges.js';
import type { AuthRequirement } from './principal.js';
import { RATE_LIMIT_HEADERS } from './rate-limit.js';
import { ErrorBody } from './schemas.js';

/**
 * What a route may answer, completed in one place: routes declare their successes and the error
 * codes particular to them (`schema.errors`); the errors every route of a kind can answer (input,
 * credentials, path ids, rate limits, our own failures) are added here from the route's shape.
 * The response contract check and the API reference both read the result.
 */

/** Error codes a route answers beyond the common ones, each with when it happens. */
export type RouteErrors = Partial<Record<ErrorCode, string>>;

/** What a route over one app's records answers when an API key of another app calls it. */
export const APP_SCOPED: RouteErrors = { app_scope_mismatch: 'the API key belongs to another app' };

declare module 'fastify' {
  interface FastifySchema {
    /** Error codes particular to this route; the common ones are derived (see responses.ts). */
    errors?: RouteErrors;
  }
}

/** A success without a body (204); typed so handlers send nothing rather than null. */
export function noContent(description: string) {
  return Type.Unsafe<undefined>({ type: 'null', description });
}

/** A 303 redirect; the body is empty and Location says where to. */
export function seeOther(description: string) {
  return Type.Null({
    description,
    headers: { location: { type: 'string', description: 'Where the client goes next' } },
  });
}

/** A 302 redirect to where the answer is served; the body is empty and Location says where. */
export function found(description: string) {
  return Type.Null({
    description,
    headers: { location: { type: 'string', description: 'Where the client goes next' } },
  });
}

/** A response header as the API reference shows it. */
type HeaderSchemas = Record<string, { type: 'string' | 'integer'; description: string }>;

/** What a 401 carries beside its body: the challenge (challenges.ts), in the reference's words. */
export function challengeHeader(challenge: string): HeaderSchemas {
  return { 'www-authenticate': { type: 'string', description: `How to authenticate: ${challenge}` } };
}

const LOCATION_HEADER: HeaderSchemas = {
  location: { type: 'string', description: 'Where what was created can be read' },
};

/** A response entry with headers added; the entry itself may be shared by other routes. */
function withHeaders(entry: unknown, headers: HeaderSchemas): unknown {
  const declared = entry as { headers?: HeaderSchemas };
  return { ...declared, headers: { ...declared.headers, ...headers } };
}

/** The one error body (ErrorBody), with `code` narrowed to the codes listed. */
export function errorBody(errors: RouteErrors): TSchema {
  const entries = Object.entries(errors) as [ErrorCode, string][];
  return Type.Object(
    {
      error: Type.Object({
        ...ErrorBody.properties.error.properties,
        code: Type.Unsafe<string>({ type: 'string', enum: entries.map(([code]) => code) }),
      }),
    },
    { description: entries.map(([code, when]) => `\`${code}\`: ${when}`).join('; ') },
  );
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** The errors a route can answer because of what it is, not what it does. */
function commonErrors(route: {
  method: string;
  url: string;
  auth: AuthRequirement;
  /** Its limits: per address, and per key too (verify and the seat routes). */
  rateLimited: 'address' | 'address and key' | null;
  idempotent: boolean;
}): RouteErrors {
  const errors: RouteErrors = {
    // Every route reads a query string, and a NUL character in any value is refused.
    validation_failed:
      'a path, query or body value is missing, malformed or out of range; details name each field',
  };
  if (BODY_METHODS.has(route.method)) {
    errors.invalid_json = 'the body is not valid JSON';
    errors.payload_too_large = 'the body is over the size limit';
    errors.unsupported_media_type = 'the body is not sent with the content type this route reads';
  }
  if (route.auth !== 'public')
    errors.unauthorized = 'no bearer token, or one that is invalid, expired or revoked';
  if (route.auth === 'user')
    errors.user_token_required = 'an API key was sent; this route needs a user token';
  if (route.auth === 'admin') errors.forbidden = 'the caller does not have the ADMIN role';
  if (route.url.includes(':')) errors.not_found = 'no such resource, or it belongs to another seller';
  if (route.rateLimited === 'address')
    errors.rate_limited = 'too many requests from this address; see Retry-After';
  if (route.rateLimited === 'address and key')
    errors.rate_limited = 'too many requests from this address, or for this license key; see Retry-After';
  if (route.idempotent) {
    errors.idempotency_key_in_use =
      'a request with this Idempotency-Key is still in progress, or never finished; see Retry-After';
    errors.idempotency_key_reused = 'this Idempotency-Key was already used for a different request';
  }
  errors.internal_error = 'a failure on our side; quote the requestId';
  errors.not_ready = 'the node is shutting down (or, on readiness, cannot reach its database); retry';
  errors.overloaded =
    'the node has more requests in hand than it serves well; retry after Retry-After seconds';
  errors.database_unavailable = 'the database cannot be reached right now; retry after Retry-After seconds';
  return errors;
}

/** Fastify's key for a status: the exact code, or a class like 5xx for our own failures. */
function statusKey(code: ErrorCode): string {
  const status = ERROR_STATUS[code];
  return status >= 500 ? '5xx' : String(status);
}

/**
 * The route's response map with an error body for every error status it can answer. A status
 * the route declares itself is left as declared (a page answering 404 with HTML owns its 404).
 */
export function completeResponses(route: RouteOptions, auth: AuthRequirement): Record<string, unknown> {
  const schema = route.schema ?? {};
  const declared = { ...((schema.response as Record<string, unknown> | undefined) ?? {}) };
  const byStatus = new Map<string, RouteErrors>();
  const common = commonErrors({
    method: String(route.method),
    url: route.url,
    auth,
    rateLimited: route.config?.rateLimit ? (route.config.rateLimit.by ? 'address and key' : 'address') : null,
    idempotent: Boolean(route.config?.idempotent),
  });
  for (const [code, when] of Object.entries({ ...common, ...schema.errors }) as [ErrorCode, string][]) {
    const key = statusKey(code);
    byStatus.set(key, { ...byStatus.get(key), [code]: when });
  }
  for (const [key, errors] of byStatus) {
    if (key in declared) {
      // Only a status the route lists codes for may also be declared by hand; both would be ambiguous.
      if (schema.errors && Object.keys(schema.errors).some((code) => statusKey(code as ErrorCode) === key)) {
        throw new Error(`${route.method} ${route.url}: status ${key} is declared in response and in errors`);
      }
      continue;
    }
    declared[key] = errorBody(errors);
    if (key === '401')
      declared[key] = withHeaders(
        declared[key],
        challengeHeader(challengeText(Object.keys(errors) as ErrorCode[])),
      );
  }
  if (declared['201']) declared['201'] = withHeaders(declared['201'], LOCATION_HEADER);
  // The counts a limited route's answers carry; the reference shows them where a client reads them.
  if (route.config?.rateLimit) {
    for (const key of Object.keys(declared).filter((status) => /^2\d\d$|^429$/.test(status)))
      declared[key] = withHeaders(declared[key], RATE_LIMIT_HEADERS);
  }
  return declared;
}
