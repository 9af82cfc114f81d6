import { jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../../platform/clock.js';

/**
 * Seller session tokens: HS256 JWTs signed with the server secret. The algorithm, issuer and
 * audience are pinned on verification, so a license token (RS256, other audience) or an
 * unsigned token is never taken for a session.
 */
const AUDIENCE = 'seller-session';
const ALGORITHM = 'HS256';
/**
 * Not the node's address: nodes sharing JWT_SECRET accept each other's sessions whatever port
 * or PUBLIC_BASE_URL each was started with.
 */
const ISSUER = 'licensing-service/session';

export interface UserTokenSigner {
  sign(userId: string): Promise<{ token: string; expiresAt: Date }>;
  /** The user id the token was issued to, or null when it is not a valid session token. */
  verify(token: string): Promise<string | null>;
}

export function createUserTokenSigner(options: {
  secret: string;
  /**
   * The issuer tokens were signed with before it was fixed (the node's API URL): still accepted,
   * so sessions from before an upgrade, or from nodes not yet upgraded, keep working.
   */
  formerIssuer?: string;
  ttlSeconds: number;
  clock: Clock;
}): UserTokenSigner {
  const key = new TextEncoder().encode(options.secret);
  return {
    async sign(userId) {
      const issuedAt = Math.floor(options.clock.now().getTime() / 1000);
      const expiresAt = new Date((issuedAt + options.ttlSeconds) * 1000);
      const token = await new SignJWT({})
        .setProtectedHeader({ alg: ALGORITHM, typ: 'JWT' })
        .setSubject(userId)
        .setIssuer(ISSUER)
        .setAudience(AUDIENCE)
        .setIssuedAt(issuedAt)
        .setExpirationTime(issuedAt + options.ttlSeconds)
        .sign(key);
      return { token, expiresAt };
    },
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, key, {
          algorithms: [ALGORITHM],
          issuer: options.formerIssuer ? [ISSUER, options.formerIssuer] : ISSUER,
          audience: AUDIENCE,
          requiredClaims: ['sub', 'exp', 'iat'],
          currentDate: options.clock.now(),
        });
        return payload.sub ?? null;
      } catch {
        return null;
      }
    },
  };
}
