import { webcrypto } from 'node:crypto';
import { errors, jwtVerify } from 'jose';
import type { Clock } from '../../platform/clock.js';
import type { Tier } from '../../platform/http/principal.js';
import { newJti, parseJti } from './jti.js';
import type { KeyRing } from './key-ring.js';
import { TOKEN_LIFETIME_SECONDS, type VerificationTier, verificationTierOf } from './token-lifetime.js';

export const TOKEN_USE = 'service_license_v1';
/** Clients and introspection allow this much clock difference. */
export const CLOCK_TOLERANCE_SECONDS = 30;

export interface LicenseTokenSubject {
  licenseId: string;
  appId: string;
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
      const key = await keys.signingKey();
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
      // The compact JWS is written here rather than through jose's SignJWT: the header is
      // encoded once per key, and the one costly step, RS256, runs on libuv's thread pool.
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
      const signingInput = `${key.encodedHeader}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
      // On the pool, not the event loop: `crypto.sign` there took the loop past a core at 1,500
      // verifies a second (p99 in the hundreds of ms). Worker threads of our own, node:crypto's
      // callback form and two cluster processes each measured no better than this.
      const signature = await webcrypto.subtle.sign(
        'RSASSA-PKCS1-v1_5',
        key.privateKey,
        Buffer.from(signingInput),
      );
      const token = `${signingInput}.${Buffer.from(signature).toString('base64url')}`;
      onIssued?.();
      return { token, expiresAt };
    },

    /** Checks signature (RS256 with a published key only), issuer, times and token_use. */
    async check(token: string): Promise<TokenCheck> {
      try {
        let purpose: string | undefined;
        const { payload } = await jwtVerify(
          token,
          async (header) => {
            const published = header.kid ? await keys.publicKey(header.kid) : null;
            if (!published) throw new errors.JWSSignatureVerificationFailed('unknown key');
            purpose = published.purpose;
            return published.key;
          },
          {
            algorithms: ['RS256'],
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
