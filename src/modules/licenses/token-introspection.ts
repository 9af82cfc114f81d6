import type { LicenseStatus } from '../../platform/db/schema.js';
import { notFound } from '../../platform/errors.js';
import { apiKeyAppId, type Principal } from '../../platform/http/principal.js';
import { type LicenseTokenClaims, parseJti, type TokenCheck } from '../license-tokens/index.js';
import type { VerificationDeps } from './deps.js';
import { clientStatus, effectiveStatus, grantsUse, keepsAccess, REASON_OF_STATUS } from './license-status.js';
import * as store from './store.js';
import { checkInDeadline } from './terms.js';

/** Why a token stands for no license that may be used now: introspection's reasons. */
export type TokenRefusal =
  | Extract<TokenCheck, { ok: false }>['reason']
  | 'token_revoked'
  | 'license_not_found'
  | 'check_in_overdue'
  | (typeof REASON_OF_STATUS)[keyof typeof REASON_OF_STATUS];

/** The license a token stands for, with its product's features, as read now; or why not. */
export type TokenHolder =
  | {
      ok: true;
      claims: LicenseTokenClaims;
      license: store.TokenLicense;
      /** Its status now (an active license past its expiry is expired). */
      status: LicenseStatus;
    }
  | { ok: false; reason: TokenRefusal; status?: LicenseStatus };

/**
 * The tokens verification hands out, after the fact: introspected against the live state (never
 * the cache), and revoked by their seller onto the denylist.
 */
export function createTokenIntrospection({
  db,
  clock,
  log,
  signer,
  denylist,
}: Pick<VerificationDeps, 'db' | 'clock' | 'log' | 'signer' | 'denylist'>) {
  /**
   * The license a token stands for now, as introspection decides it: signature and claims, the
   * denylist, then the live license (status, expiry, a check-in deadline), never the cache.
   */
  async function holderOf(token: string): Promise<TokenHolder> {
    const checked = signer ? await signer.check(token) : ({ ok: false, reason: 'invalid_token' } as const);
    if (!checked.ok) return { ok: false, reason: checked.reason };
    const { claims } = checked;
    if (await denylist.isDenied(claims.jti)) return { ok: false, reason: 'token_revoked' };
    const license = await store.findTokenLicense(db, checked.licenseId);
    if (!license) return { ok: false, reason: 'license_not_found' };
    const now = clock.now();
    const status = effectiveStatus(license.status, license.expires_at, now);
    if (!grantsUse(status) && !keepsAccess(license, now))
      return { ok: false, reason: REASON_OF_STATUS[status as keyof typeof REASON_OF_STATUS], status };
    const deadline = checkInDeadline(license);
    if (deadline && now.getTime() > deadline.getTime())
      return { ok: false, reason: 'check_in_overdue', status };
    return { ok: true, claims, license, status };
  }

  return {
    holderOf,

    /** Signature and claims first, then the live state: the license and the denylist. */
    async introspect(token: string) {
      const held = await holderOf(token);
      if (!held.ok)
        return {
          active: false,
          reason: held.reason,
          ...(held.status ? { status: clientStatus(held.status) } : {}),
        };
      const { claims } = held;
      return {
        active: true,
        sub: claims.sub,
        aud: claims.aud,
        jti: claims.jti,
        exp: claims.exp,
        iat: claims.iat,
        status: clientStatus(held.status),
        ...(claims.license_exp !== undefined ? { license_exp: claims.license_exp } : {}),
        svc_vt: claims.svc_vt,
        seller_tier: claims.seller_tier,
        hw_bound: claims.hw_bound,
      };
    },

    /**
     * Puts a token on the denylist by its jti. Only the seller owning the license may; the entry
     * lasts until the token would have expired. Revoking twice is the same as once.
     */
    async revokeToken(principal: Principal, jti: string) {
      const parsed = parseJti(jti);
      const license = parsed ? await store.findLicenseById(db, parsed.licenseId) : undefined;
      const keyApp = apiKeyAppId(principal);
      if (
        !parsed ||
        !license ||
        license.user_id !== principal.userId ||
        (keyApp && keyApp !== license.app_id)
      ) {
        throw notFound('Token');
      }
      if (!(await denylist.deny(jti, license.id, parsed.expiresAt))) throw notFound('Token');
      log.info({ licenseId: license.id }, 'license_token.revoked');
      return { jti, revoked: true as const, expiresAt: parsed.expiresAt.toISOString() };
    },
  };
}
