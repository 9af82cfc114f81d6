import { errors, jwtVerify } from 'jose';
import type { Clock } from '../../platform/clock.js';
import type { SigningAlgorithm } from '../../platform/db/schema.js';
import type { Tier } from '../../platform/http/principal.js';
import { newJti, parseJti } from './jti.js';
import { type KeyRing, SIGNING_ALGORITHMS } from './key-ring.js';
import { TOKEN_LIFETIME_SECONDS, type VerificationTier, verificationTierOf } from './token-lifetime.js';

export const TOKEN_USE = 'service_license_v1';
/** Clients and introspection allow this much clock difference. */
export const CLOCK_TOLERANCE_SECONDS = 30;

export interface LicenseTokenSubject {
  licenseId: string;
  appId: string;
  /** The app's tokenAlgorithm: which of the token keys signs. */
  algorithm: SigningAlgorithm;
  /** Status as shown to clients (ACTIVE, …). */
  status: string;
  hwBound: boolean;
  sellerTier: Tier;
  plan?: string;
  features?: string[];
  licenseExpiresAt: Date | null;
  /**
   * Past its expiry under maintain_access: the token says so (`expired: true`) and lives its
   * usual length, where any other token ends with the license.
   */
  expired?: boolean;
  /** A floating license's seat lease end: the token expires then at the latest. */
  notAfter?: Date;
  /** The license's check-in deadline: the token says it and ends by then. */
  checkInBy?: Date;
  /** Uses left of the license's quota, as of signing. */
  usesRemaining?: number;
}

export interface LicenseTokenClaims {
  iss: string;
  sub: string;
  aud: string;
  exp: number;
  iat: number;
  nbf: number;
  jti: string;
  token_use: string;
  svc_vt: VerificationTier;
  seller_tier: Tier;
  status: string;
  hw_bound: boolean;
  plan?: string;
  features?: string[];
  license_exp?: number;
  /** Past its expiry, the license keeps access (expiry strategy maintain_access). */
  expired?: true;
  /** Seconds: the license must check in online by then (its check-in days and grace). */
  check_in_by?: number;
  /** Uses left of the license's quota when the token was signed. */
  uses_remaining?: number;
}

export type TokenCheck =
  | { ok: true; claims: LicenseTokenClaims; licenseId: string }
  | { ok: false; reason: 'token_expired' | 'invalid_signature' | 'invalid_token' };

export type TokenSigner = ReturnType<typeof createTokenSigner>;

export function createTokenSigner({
  keys,
  clock,
  issuer,
  onIssued,
}: {
  keys: KeyRing;
  clock: Clock;
  issuer: string;
  /** Told of each token signed (the metrics); in memory only. */
  onIssued?: () => void;
}) {
  return {
    /**
     * A signed token for a license that just verified, or null when no key signs yet. It lives
     * as long as the seller's verification tier allows, and never past the license's expiry.
     */
    async issue(subject: LicenseTokenSubject): Promise<{ token: string; expiresAt: Date } | null> {
      const key = await keys.signingKey('token', subject.algorithm);
      if (!key) return null;
      const iat = Math.floor(clock.now().getTime() / 1000);
      const verificationTier = verificationTierOf(subject.sellerTier);
      const licenseExp = subject.licenseExpiresAt
        ? Math.floor(subject.licenseExpiresAt.getTime() / 1000)
        : null;
      const checkInBy = subject.checkInBy ? Math.floor(subject.checkInBy.getTime() / 1000) : null;
      const exp = Math.min(
        iat + TOKEN_LIFETIME_SECONDS[verificationTier],
        subject.expired ? Number.POSITIVE_INFINITY : (licenseExp ?? Number.POSITIVE_INFINITY),
        subject.notAfter ? Math.floor(subject.notAfter.getTime() / 1000) : Number.POSITIVE_INFINITY,
        checkInBy ?? Number.POSITIVE_INFINITY,
        Math.floor(keys.tokensEndBy() / 1000),
      );
      const expiresAt = new Date(exp * 1000);
      const claims: LicenseTokenClaims = {
        token_use: TOKEN_USE,
        svc_vt: verificationTier,
        seller_tier: subject.sellerTier,
        status: subject.status,
        hw_bound: subject.hwBound,
        ...(subject.plan !== undefined ? { plan: subject.plan } : {}),
        ...(subject.features !== undefined ? { features: subject.features } : {}),
        ...(licenseExp !== null ? { license_exp: licenseExp } : {}),
        ...(subject.expired ? { expired: true as const } : {}),
        ...(checkInBy !== null ? { check_in_by: checkInBy } : {}),
        ...(subject.usesRemaining !== undefined ? { uses_remaining: subject.usesRemaining } : {}),
        iss: issuer,
        sub: subject.licenseId,
        aud: subject.appId,
        iat,
        nbf: iat,
        exp,
        jti: newJti(subject.licenseId, expiresAt),
      };
      const token = await key.sign(claims);
      onIssued?.();
      return { token, expiresAt };
    },

    /**
     * Checks signature (with a published key, in the one algorithm that key has: RS256 or
     * EdDSA), issuer, times and token_use.
     */
    async check(token: string): Promise<TokenCheck> {
      try {
        let purpose: string | undefined;
        const { payload } = await jwtVerify(
          token,
          async (header) => {
            const published = header.kid ? await keys.publicKey(header.kid) : null;
            if (!published) throw new errors.JWSSignatureVerificationFailed('unknown key');
            // A header never picks an algorithm its key does not have.
            if (header.alg !== published.algorithm) throw new errors.JOSEAlgNotAllowed('not this key’s alg');
            purpose = published.purpose;
            return published.key;
          },
          {
            algorithms: [...SIGNING_ALGORITHMS],
            issuer,
            currentDate: clock.now(),
            clockTolerance: CLOCK_TOLERANCE_SECONDS,
            requiredClaims: ['sub', 'aud', 'exp', 'iat', 'jti'],
          },
        );
        const claims = payload as unknown as LicenseTokenClaims;
        const jti = parseJti(claims.jti);
        // The offline key signs no license token: whatever it signed is something else.
        if (purpose !== 'token' || claims.token_use !== TOKEN_USE || !jti || jti.licenseId !== claims.sub) {
          return { ok: false, reason: 'invalid_token' };
        }
        return { ok: true, claims, licenseId: claims.sub };
      } catch (error) {
        if (error instanceof errors.JWTExpired) return { ok: false, reason: 'token_expired' };
        if (error instanceof errors.JWSSignatureVerificationFailed)
          return { ok: false, reason: 'invalid_signature' };
        return { ok: false, reason: 'invalid_token' };
      }
    },
  };
}
