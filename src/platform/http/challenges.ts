import type { FastifyRequest } from 'fastify';
import type { ERROR_STATUS, ErrorCode } from '../errors.js';
import { bearerTokenOf } from './principal.js';

/**
 * What a 401 answers in `WWW-Authenticate` (RFC 9110 §11.6.1: every 401 names at least one
 * challenge for the resource), by error code. A code that answers 401 without a challenge here
 * does not compile. docs/api-conventions.md lists them for clients.
 *
 * - `Bearer` (RFC 6750) for the core API's token and key routes; with `error="invalid_token"`
 *   when a bearer token was sent and refused, without an error when none was (§3.1).
 * - Routes whose credentials travel in the body have no registered scheme; they name their own,
 *   as RFC 9110 allows, so a client learns what to send: `Password` (login: e-mail and password)
 *   and `CallbackSecret` (a renewal charge: the product's callback secret).
 * - The buyer portal's pages use `Cookie` (cookieChallenge), after draft-broyer-http-cookie-auth.
 */

/** The protection space of the core API's credentials. */
export const API_REALM = 'licensing';
/** The checkout host's protection space (its routes take no bearer tokens). */
const CHECKOUT_REALM = 'checkout';

type UnauthorizedCode = {
  [Code in ErrorCode]: (typeof ERROR_STATUS)[Code] extends 401 ? Code : never;
}[ErrorCode];

const BEARER = `Bearer realm="${API_REALM}"`;
const REFUSED_BEARER = `${BEARER}, error="invalid_token", error_description="The token is invalid, expired or revoked"`;

const CHALLENGES: Record<UnauthorizedCode, (request: FastifyRequest) => string> = {
  unauthorized: (request) =>
    bearerTokenOf(request.headers.authorization) === null ? BEARER : REFUSED_BEARER,
  invalid_credentials: () => `Password realm="${API_REALM}"`,
  invalid_callback_secret: () => `CallbackSecret realm="${CHECKOUT_REALM}"`,
};

/** The challenges as the API reference states them, per code. */
const CHALLENGE_TEXT: Record<UnauthorizedCode, string> = {
  unauthorized: `\`${BEARER}\`; with \`error="invalid_token"\` when a bearer token was sent and refused`,
  invalid_credentials: `\`Password realm="${API_REALM}"\`: send the e-mail and password in the body`,
  invalid_callback_secret: `\`CallbackSecret realm="${CHECKOUT_REALM}"\`: send the product's callback secret in the body`,
};

/** What the reference says a 401 answering these codes carries in WWW-Authenticate. */
export function challengeText(codes: readonly ErrorCode[]): string {
  return codes
    .map((code) => CHALLENGE_TEXT[code as UnauthorizedCode])
    .filter(Boolean)
    .join('; ');
}

/** The challenge a 401 of this code carries; undefined for a code that does not answer 401. */
export function challengeFor(code: ErrorCode, request: FastifyRequest): string | undefined {
  return CHALLENGES[code as UnauthorizedCode]?.(request);
}

/** A page behind a session cookie: where to sign in and which cookie the session is. */
export function cookieChallenge(options: { realm: string; signInPath: string; cookieName: string }): string {
  return `Cookie realm="${options.realm}", form-action="${options.signInPath}", cookie-name="${options.cookieName}"`;
}
