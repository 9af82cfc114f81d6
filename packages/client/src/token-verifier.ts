import type { JWTVerifyGetKey } from 'jose';
import { type ClockState, type StateStore, vouchForClock } from './clock-guard.js';
import { LicenseTokenError } from './errors.js';
import { LICENSE_SIGNING_ALGORITHMS } from './license-file.js';
import type { JsonWebKeySet, LicenseTokenClaims } from './types.js';

export interface LicenseTokenVerifierOptions {
  /** Your app id: a token issued for another app (or for none) is refused. */
  appId: string;
  /**
   * The key set address: `license_jwks_uri` from a verification, or `client.jwksUri`. Without it
   * the verifier never goes online and knows only `keySet`.
   */
  jwksUri?: string;
  /** A key set you stored earlier (from `onKeySet` or `fetchKeySet`): tokens check offline with it. */
  keySet?: JsonWebKeySet;
  /** Called with each key set fetched from `jwksUri`, so you can store it for offline use. */
  onKeySet?: (keySet: JsonWebKeySet) => void | Promise<void>;
  /** Expected iss; by default the service address the key set came from is not checked. */
  issuer?: string;
  /** Allowed clock difference (default 30 s). */
  clockToleranceSeconds?: number;
  /** How long a fetched key set is used before it is fetched again (default 5 minutes). */
  cacheMs?: number;
  /** Shortest time between two fetches of the key set on unknown kids (default 10 s). */
  refetchCooldownMs?: number;
  /** The current time, for tests and for clients with a trusted clock of their own. */
  now?: () => Date;
  fetch?: typeof fetch;
  /**
   * The clock-rollback guard verifyLicenseFile keeps. A token newer than any file, list or token
   * checked before is the service vouching for the time (an online check), and resets the guard,
   * so a clock once set ahead by mistake no longer locks the machine's license file out.
   */
  clock?: ClockState | StateStore<ClockState>;
}

/**
 * Checks license tokens offline, the way the service documents it: RS256 or EdDSA (Ed25519), each
 * only with a key of its own kind, key chosen by kid, token_use and aud checked, a small clock
 * leeway. The key set comes from `keySet` (stored,
 * works with no network), from `jwksUri` (fetched, cached for `cacheMs`), or both: the stored set
 * first, fetched again only for a kid it does not know, which is how a rotated key is learnt.
 */
export class LicenseTokenVerifier {
  private keySet: JsonWebKeySet | undefined;
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private lastFetchTry = Number.NEGATIVE_INFINITY;
  private localKeys: Promise<JWTVerifyGetKey> | undefined;
  private inflight: Promise<JsonWebKeySet> | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: LicenseTokenVerifierOptions) {
    if (typeof options?.appId !== 'string' || options.appId.length === 0) {
      throw new TypeError('appId: must be your app id (tokens for other apps are refused)');
    }
    if (options.jwksUri === undefined && options.keySet === undefined) {
      throw new TypeError('jwksUri or keySet: give the key set address, a stored key set, or both');
    }
    if (options.jwksUri !== undefined) new URL(options.jwksUri); // throws on a malformed address now
    if (options.keySet !== undefined) this.use(checkedKeySet(options.keySet, 'keySet'));
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
  }

  /** The key set in use (stored or last fetched); undefined before the first fetch. */
  get currentKeySet(): JsonWebKeySet | undefined {
    return this.keySet;
  }

  /**
   * Fetches the key set from `jwksUri` now (at start-up when online, say), hands it to `onKeySet`
   * and uses it from then on. Throws LicenseTokenError `key_set_unavailable` when it cannot.
   */
  refresh(): Promise<JsonWebKeySet> {
    const uri = this.options.jwksUri;
    if (uri === undefined) {
      return Promise.reject(
        new LicenseTokenError('key_set_unavailable', 'No jwksUri: this verifier works offline only'),
      );
    }
    // Checks that start together share one fetch.
    this.inflight ??= (async () => {
      this.lastFetchTry = this.clock();
      const keySet = await fetchKeySet(uri, { fetch: this.fetchImpl });
      this.use(keySet);
      this.fetchedAt = this.clock();
      await this.options.onKeySet?.(keySet);
      return keySet;
    })().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  async verify(token: string): Promise<LicenseTokenClaims> {
    if (typeof token !== 'string' || token.length === 0) {
      throw new LicenseTokenError('invalid_token', 'The license token is missing (expected a JWT string)');
    }
    const { jwtVerify, errors } = await import('jose');
    let payload: Record<string, unknown>;
    try {
      // The key set decides the algorithm, never the token: a key answers only a header whose alg
      // is the key's own alg and kind (RSA for RS256, OKP Ed25519 for EdDSA), else no key matches.
      ({ payload } = await jwtVerify(token, (header, jws) => this.key(header, jws), {
        algorithms: [...LICENSE_SIGNING_ALGORITHMS],
        audience: this.options.appId,
        clockTolerance: this.options.clockToleranceSeconds ?? 30,
        ...(this.options.issuer ? { issuer: this.options.issuer } : {}),
        ...(this.options.now ? { currentDate: this.options.now() } : {}),
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
      }));
    } catch (error) {
      if (error instanceof LicenseTokenError) throw error;
      if (error instanceof errors.JWTExpired)
        throw new LicenseTokenError('token_expired', 'The license token has expired');
      if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'aud') {
        throw new LicenseTokenError('wrong_audience', 'The license token was issued for another app');
      }
      if (
        error instanceof errors.JWSSignatureVerificationFailed ||
        error instanceof errors.JWKSNoMatchingKey
      ) {
        throw new LicenseTokenError(
          'invalid_signature',
          'The license token is not signed by a published key',
        );
      }
      throw new LicenseTokenError(
        'invalid_token',
        `The license token is not valid: ${(error as Error).message}`,
      );
    }
    if (payload.token_use !== 'service_license_v1') {
      throw new LicenseTokenError('wrong_token_use', 'Not a license token (token_use)');
    }
    if (this.options.clock !== undefined && typeof payload.iat === 'number') {
      const tolerance = (this.options.clockToleranceSeconds ?? 30) * 1000;
      const now = (this.options.now?.() ?? new Date()).getTime();
      await vouchForClock(this.options.clock, payload.iat * 1000, now, tolerance);
    }
    return payload as unknown as LicenseTokenClaims;
  }

  /** The key for a token: from the set in hand, fetching it first when stale or when the kid is unknown. */
  private async key(...args: Parameters<JWTVerifyGetKey>): Promise<Awaited<ReturnType<JWTVerifyGetKey>>> {
    const online = this.options.jwksUri !== undefined;
    const cooled = () => this.clock() - this.lastFetchTry >= (this.options.refetchCooldownMs ?? 10_000);
    const stale = this.clock() - this.fetchedAt > (this.options.cacheMs ?? 5 * 60_000);
    // A stored set is used as it is (a network attempt per check would stall offline clients); a
    // fetched one is refreshed after cacheMs, keeping the old one when the refresh fails.
    if (online && (this.keySet === undefined || (stale && this.options.keySet === undefined && cooled()))) {
      await this.refresh().catch((error) => {
        if (this.keySet === undefined) throw error;
      });
    }
    try {
      return await (await this.localKeys!)(...args);
    } catch (error) {
      const { errors } = await import('jose');
      if (!(error instanceof errors.JWKSNoMatchingKey) || !online || !cooled()) throw error;
      await this.refresh();
      return (await this.localKeys!)(...args);
    }
  }

  private use(keySet: JsonWebKeySet): void {
    this.keySet = keySet;
    // The offline key signs license files and revocation lists, never a license token.
    const tokenKeys = { keys: keySet.keys.filter((key) => key.purpose !== 'offline') };
    this.localKeys = import('jose').then(({ createLocalJWKSet }) =>
      createLocalJWKSet(tokenKeys as Parameters<typeof createLocalJWKSet>[0]),
    );
  }

  private clock(): number {
    return Date.now();
  }
}

/**
 * Fetches a key set once (GET `jwksUri`), to store and give to `new LicenseTokenVerifier({ keySet })`
 * later. Throws LicenseTokenError `key_set_unavailable` when there is no usable answer.
 */
export async function fetchKeySet(
  jwksUri: string,
  options: { fetch?: typeof fetch; timeoutMs?: number } = {},
): Promise<JsonWebKeySet> {
  const fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
  let body: unknown;
  try {
    const res = await fetchImpl(new URL(jwksUri), {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
    });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    body = await res.json();
  } catch (error) {
    throw new LicenseTokenError(
      'key_set_unavailable',
      `The key set could not be fetched from ${jwksUri}: ${(error as Error).message}`,
    );
  }
  return checkedKeySet(body, 'the key set answer');
}

function checkedKeySet(value: unknown, name: string): JsonWebKeySet {
  const keys = (value as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.some((key) => typeof key !== 'object' || key === null)) {
    throw new LicenseTokenError('key_set_unavailable', `${name} is not a key set ({ "keys": [...] })`);
  }
  return value as JsonWebKeySet;
}
