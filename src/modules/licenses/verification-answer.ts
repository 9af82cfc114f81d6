import { isDatabaseUnavailable } from '../../platform/db/errors.js';
import type { LicenseMetadata, LicenseStatus } from '../../platform/db/schema.js';
import { verificationTierOf } from '../license-tokens/index.js';
import type { LicenseState } from './cache-entry.js';
import type { VerificationDeps } from './deps.js';
import { effectiveFeatures } from './entitlements.js';
import type { Later } from './later.js';
import { clientStatus, effectiveStatus, grantsUse, keepsAccess, REASON_OF_STATUS } from './license-status.js';
import type { VerificationResultType, VerifyCode } from './schemas.js';
import * as store from './store.js';
import { checkInDeadline, type UsageState, usesRemaining } from './terms.js';

export type VerificationAnswers = ReturnType<typeof createVerificationAnswers>;

/**
 * What a verification answers, valid or not, and where it is counted: every answer of verify,
 * validate-hardware and seat checkout is made here, and a valid one is signed here.
 */
export function createVerificationAnswers({
  db,
  signer,
  jwksUri,
  counts,
  outcomes,
}: Pick<VerificationDeps, 'db' | 'signer' | 'jwksUri' | 'counts' | 'outcomes'>) {
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
  const unknownKey = () => {
    outcomes?.(notFoundResult.code);
    return notFoundResult;
  };

  /**
   * The answer for a license found, as of `now`. Built in one of few fixed shapes (no spreads):
   * the serializer reads every answer, and objects of many shapes made its reads slow.
   */
  function answer(
    found: LicenseState,
    outcome: { code?: VerifyCode; hwBound: boolean; leaseExpiresAt?: Date },
    now: Date,
  ): Later<VerificationResultType> {
    const status = effectiveStatus(found.status, found.expires_at, now);
    // Only a license that grants no use can be keeping access past its expiry.
    const kept = !grantsUse(status) && keepsAccess(found, now);
    const code =
      outcome.code ??
      (grantsUse(status) || kept ? undefined : REASON_OF_STATUS[status as keyof typeof REASON_OF_STATUS]);
    const expiresAt = found.expires_at ? found.expires_at.toISOString().replace(/\.\d{3}Z$/, 'Z') : null;
    // Every verification that found its license ends here (unknown keys have no app to count
    // for); a valid one is counted once its answer is complete, so a failed signing is not.
    if (code !== undefined) {
      counts.count(found.app_id, false, now, found.id);
      outcomes?.(code);
      return {
        valid: false,
        appId: found.app_id,
        code,
        status: clientStatus(status),
        expiresAt,
        email: found.email,
        verificationType: verificationTierOf(found.tier),
        hw_bound: outcome.hwBound,
      };
    }
    // A quota's count is read each time, as seats are: consumes on any node change it.
    if (found.max_uses === null) return grant(found, outcome, now, status, kept, expiresAt, null);
    return store.usageOf(db, found.id).then(
      (usage) => grant(found, outcome, now, status, kept, expiresAt, usage ?? found),
      (err) => {
        if (!isDatabaseUnavailable(err)) throw err;
        return grant(found, outcome, now, status, kept, expiresAt, found);
      },
    );
  }

  function grant(
    found: LicenseState,
    outcome: { hwBound: boolean; leaseExpiresAt?: Date },
    now: Date,
    status: LicenseStatus,
    kept: boolean,
    expiresAt: string | null,
    usage: UsageState | null,
  ): Later<VerificationResultType> {
    const features = effectiveFeatures(found);
    const granted: VerificationResultType = {
      valid: true,
      appId: found.app_id,
      status: clientStatus(status),
      expiresAt,
      email: found.email,
      verificationType: verificationTierOf(found.tier),
      hw_bound: outcome.hwBound,
      features: features ?? [],
    };
    if (kept) granted.expired = true;
    if (outcome.leaseExpiresAt) granted.lease_expires_at = outcome.leaseExpiresAt.toISOString();
    const checkInBy = checkInDeadline(found);
    if (checkInBy) granted.check_in_by = checkInBy.toISOString();
    const remaining = usage === null ? null : usesRemaining(usage, now);
    if (remaining !== null) granted.uses_remaining = remaining;
    if (!signer) {
      counts.count(found.app_id, true, now, found.id);
      outcomes?.(undefined);
      return granted;
    }
    const metadata = found.metadata as LicenseMetadata;
    return signer
      .issue({
        licenseId: found.id,
        appId: found.app_id,
        algorithm: found.token_algorithm,
        status: granted.status,
        hwBound: outcome.hwBound,
        sellerTier: found.tier,
        plan: typeof metadata.plan === 'string' ? metadata.plan : undefined,
        features,
        licenseExpiresAt: found.expires_at,
        expired: kept,
        notAfter: outcome.leaseExpiresAt,
        checkInBy: checkInBy ?? undefined,
        usesRemaining: remaining ?? undefined,
      })
      .then((issued) => {
        counts.count(found.app_id, true, now, found.id);
        outcomes?.(undefined);
        if (!issued) return granted;
        granted.license_token = issued.token;
        granted.license_token_expires_at = issued.expiresAt.toISOString();
        granted.license_jwks_uri = jwksUri;
        return granted;
      });
  }

  return { answer, unknownKey };
}
