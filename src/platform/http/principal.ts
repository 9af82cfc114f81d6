import type { FastifyRequest } from 'fastify';
import { AppError, notFound } from '../errors.js';

export const ROLES = ['SELLER', 'ADMIN'] as const;
/** Plan tiers from lowest to highest; a feature gated at one tier is open to those above it. */
export const TIERS = ['free', 'pro', 'business', 'enterprise'] as const;
export type Role = (typeof ROLES)[number];
export type Tier = (typeof TIERS)[number];

/** Who is calling: a seller (or admin) through a user token, or through an app API key. */
export interface Principal {
  userId: string;
  role: Role;
  tier: Tier;
  credential: { kind: 'user_token' } | { kind: 'api_key'; apiKeyId: string; appId: string };
}

/**
 * What a route requires, declared in its config:
 * - public: no credentials;
 * - seller: a user token or an API key;
 * - user: a user token only (managing keys and account-level settings);
 * - admin: the ADMIN role, through either credential.
 */
export type AuthRequirement = 'public' | 'seller' | 'user' | 'admin';

export type Authenticate = (bearer: string) => Promise<Principal | null>;

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthRequirement;
    /** Answered even when the node sheds load (health checks): an overloaded node is alive. */
    alwaysAnswer?: boolean;
    /** A liveness or readiness probe: answers 503 `not_ready` from the moment the node drains. */
    probe?: boolean;
    /**
     * `quiet`: a route client software calls at volume (verify) logs its successful answers at
     * debug, so the info-level access log keeps its failures only.
     */
    accessLog?: 'quiet';
    /** The path carries a secret (a sign-in link's token): logs show the route pattern instead. */
    secretInPath?: boolean;
    /**
     * A creating route that accepts `Idempotency-Key`: a retry with the same key gets the first
     * answer instead of doing the work again (see idempotency.ts).
     */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** The token of an `Authorization: Bearer <token>` header; null for no header or another scheme. */
export function bearerTokenOf(header: string | string[] | undefined): string | null {
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1] ?? null;
}

/** The caller of a route that requires credentials (the auth hook guarantees one). */
export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new AppError('unauthorized', 'Authentication required');
  return request.principal;
}

/** The app an API key is limited to, or null for a user session (which sees all its apps). */
export function apiKeyAppId(principal: Principal): string | null {
  return principal.credential.kind === 'api_key' ? principal.credential.appId : null;
}

/**
 * A seller's record as the caller may see it: missing answers 404 naming `what`; one of
 * another app than the caller's API key answers 403 (a user token sees all its apps).
 */
export function visibleTo<T extends { app_id: string | null }>(
  principal: Principal,
  row: T | null | undefined,
  what: string,
): T {
  if (!row) throw notFound(what);
  const keyApp = apiKeyAppId(principal);
  if (keyApp && keyApp !== row.app_id)
    throw new AppError('app_scope_mismatch', 'This API key belongs to another app');
  return row;
}
