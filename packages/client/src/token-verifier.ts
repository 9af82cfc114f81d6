import { createRemoteJWKSet, errors, jwtVerify } from 'jose';
import { LicenseTokenError } from './errors.js';
import type { LicenseTokenClaims } from './types.js';

export interface LicenseTokenVerifierOptions {
  /** The key set address: `license_jwks_uri` from a verification, or `{base_url}/licenses/jwks`. */
  jwksUri: string;
  /** Your app id: a token issued for another app (or for none) is refused. */
  appId: string;
  /** Expected iss; by default the service address the key set came from is not checked. */
  issuer?: string;
  /** Allowed clock difference (default 30 s). */
  clockToleranceSeconds?: number;
  /** How long the key set is cached (default 5 minutes). */
  cacheMs?: number;
  /** Shortest time between two fetches of the key set on unknown kids (default 10 s). */
  refetchCooldownMs?: number;
  /** The current time, for tests and for clients with a trusted clock of their own. */
  now?: () => Date;
}

/**
 * Checks license tokens offline, the way the service documents it: RS256 only, key chosen by
 * kid from the published set (cached briefly, fetched again on an unknown kid, which is how a
 * rotated key is learnt), token_use and aud checked, a small clock leeway.
 */
export class LicenseTokenVerifier {
  private readonly keySet: ReturnType<typeof createRemoteJWKSet>;

  constructor(private readonly options: LicenseTokenVerifierOptions) {
    this.keySet = createRemoteJWKSet(new URL(options.jwksUri), {
      cacheMaxAge: options.cacheMs ?? 5 * 60_000,
      cooldownDuration: options.refetchCooldownMs ?? 10_000,
    });
  }

  async verify(token: string): Promise<LicenseTokenClaims> {
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.keySet, {
        algorithms: ['RS256'],
        audience: this.options.appId,
        clockTolerance: this.options.clockToleranceSeconds ?? 30,
        ...(this.options.issuer ? { issuer: this.options.issuer } : {}),
        ...(this.options.now ? { currentDate: this.options.now() } : {}),
        requiredClaims: ['sub', 'exp', 'iat', 'jti'],
      }));
    } catch (error) {
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
    return payload as unknown as LicenseTokenClaims;
  }
}
