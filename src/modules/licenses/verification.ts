import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { LicenseMetadata } from '../../platform/db/schema.js';
import { notFound } from '../../platform/errors.js';
import { apiKeyAppId, type Principal } from '../../platform/http/principal.js';
import type { Log } from '../../platform/log.js';
import {
  parseJti,
  type TokenDenylist,
  type TokenSigner,
  verificationTierOf,
} from '../license-tokens/index.js';
import { normalizeLicenseKey } from './license-key.js';
import { clientStatus, effectiveStatus } from './license-status.js';
import type { VerificationResultType, VerifyCode } from './schemas.js';
import * as store from './store.js';
import type { Found, LicenseState, VerificationCache } from './verification-cache.js';

export interface VerificationDeps {
  db: Db;
  clock: Clock;
  log: Log;
  signer: TokenSigner | null;
  denylist: TokenDenylist;
  jwksUri: string;
  /** Tallies outcomes in memory for the admin analytics; it must not do I/O (hot path). */
  counts: { count(appId: string, valid: boolean): void };
  /** Every lookup of a key goes through it; it reads the store on a miss. */
  cache: Pick<VerificationCache, 'find' | 'bound'>;
}

const REASON_OF_STATUS = {
  expired: 'license_expired',
  suspended: 'license_suspended',
  revoked: 'license_revoked',
} as const;

export type Verification = ReturnType<typeof createVerification>;

/**
 * What client software calls: verify a key (activating the device when there is room),
 * validate an already bound device, and introspect or revoke the tokens handed out. Invalid
 * outcomes are answers (200, valid: false, a reason code), not errors.
 */
export function createVerification({
  db,
  clock,
  log,
  signer,
  denylist,
  jwksUri,
  counts,
  cache,
}: VerificationDeps) {
  const notFoundResult: VerificationResultType = {
    valid: false,
    appId: null,
    code: 'license_not_found',
    status: 'NOT_FOUND',
    expiresAt: null,
    email: null,
    verificationType: null,
    hw_bound: false,
  };

  async function lookup(key: string, hwuid: string | null, appId: string | undefined): Promise<Found | null> {
    const canonical = normalizeLicenseKey(key);
    if (!canonical) return null;
    const found = await cache.find(canonical, hwuid);
    if (!found) return null;
    // A key of another app answers exactly like a key that does not exist.
    if (appId !== undefined && found.state.app_id !== appId) return null;
    return found;
  }

  async function answer(
    found: LicenseState,
    outcome: { code?: VerifyCode; hwBound: boolean },
  ): Promise<VerificationResultType> {
    const now = clock.now();
    const status = effectiveStatus(found.status, found.expires_at, now);
    const code =
      outcome.code ??
      (status === 'active' ? undefined : REASON_OF_STATUS[status as keyof typeof REASON_OF_STATUS]);
    const result: VerificationResultType = {
      valid: code === undefined,
      appId: found.app_id,
      ...(code ? { code } : {}),
      status: clientStatus(status),
      expiresAt: found.expires_at ? found.expires_at.toISOString().replace(/\.\d{3}Z$/, 'Z') : null,
      email: found.email,
      verificationType: verificationTierOf(found.tier),
      hw_bound: outcome.hwBound,
    };
    // Every verification that found its license ends here (unknown keys have no app to count
    // for); a valid one is counted once its answer is complete, so a failed signing is not.
    if (!result.valid || !signer) {
      counts.count(found.app_id, result.valid);
      return result;
    }
    const metadata = found.metadata as LicenseMetadata;
    const issued = await signer.issue({
      licenseId: found.id,
      appId: found.app_id,
      status: result.status,
      hwBound: outcome.hwBound,
      sellerTier: found.tier,
      plan: typeof metadata.plan === 'string' ? metadata.plan : undefined,
      features: Array.isArray(metadata.features) ? metadata.features : undefined,
      licenseExpiresAt: found.expires_at,
    });
    counts.count(found.app_id, true);
    if (!issued) return result;
    return {
      ...result,
      license_token: issued.token,
      license_token_expires_at: issued.expiresAt.toISOString(),
      license_jwks_uri: jwksUri,
    };
  }

  const usable = (found: LicenseState) =>
    effectiveStatus(found.status, found.expires_at, clock.now()) === 'active';

  return {
    /**
     * Verifies a key. With a hwuid, a device not yet bound is activated while the license has
     * room; a license with a device limit needs the hwuid. Only an activation writes.
     */
    async verify(input: { key: string; hwuid?: string; appId?: string }): Promise<VerificationResultType> {
      const hwuid = input.hwuid ?? null;
      const lookedUp = await lookup(input.key, hwuid, input.appId);
      if (!lookedUp) return notFoundResult;
      const { state: found, deviceBound } = lookedUp;
      if (!usable(found)) return answer(found, { hwBound: false });
      if (hwuid === null) {
        return answer(
          found,
          found.max_devices === null ? { hwBound: false } : { code: 'hwuid_required', hwBound: false },
        );
      }
      if (deviceBound) return answer(found, { hwBound: true });
      // Binding stays a conditional write in the database; only its outcome is remembered.
      const activation = await store.activateDevice(db, found.id, hwuid, clock.now());
      if (activation === 'full') {
        log.info({ licenseId: found.id }, 'license.verify.device_refused');
        return answer(found, { code: 'device_limit_reached', hwBound: false });
      }
      cache.bound(lookedUp, hwuid);
      log.info({ licenseId: found.id }, 'license.device.activated');
      return answer(found, { hwBound: true });
    },

    /** Checks a device already bound to the license; never takes a device place. */
    async validateHardware(input: {
      key: string;
      hwuid: string;
      appId?: string;
    }): Promise<VerificationResultType> {
      const lookedUp = await lookup(input.key, input.hwuid, input.appId);
      if (!lookedUp) return notFoundResult;
      const { state: found, deviceBound } = lookedUp;
      if (!usable(found)) return answer(found, { hwBound: false });
      return answer(found, deviceBound ? { hwBound: true } : { code: 'device_not_bound', hwBound: false });
    },

    /** Signature and claims first, then the live state: the license and the denylist. */
    async introspect(token: string) {
      const checked = signer ? await signer.check(token) : ({ ok: false, reason: 'invalid_token' } as const);
      if (!checked.ok) return { active: false, reason: checked.reason };
      const { claims } = checked;
      if (await denylist.isDenied(claims.jti)) return { active: false, reason: 'token_revoked' };
      const license = await store.findLicenseById(db, checked.licenseId);
      if (!license) return { active: false, reason: 'license_not_found' };
      const status = effectiveStatus(license.status, license.expires_at, clock.now());
      if (status !== 'active')
        return { active: false, reason: REASON_OF_STATUS[status], status: clientStatus(status) };
      return {
        active: true,
        sub: claims.sub,
        aud: claims.aud,
        jti: claims.jti,
        exp: claims.exp,
        iat: claims.iat,
        status: clientStatus(status),
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
