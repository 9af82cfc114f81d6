import type { LicenseStatus } from '../../platform/db/schema.js';

/**
 * The canonical statuses are lowercase (records, events, filters). Clients see them upper
 * case in verification results and token claims, as the interface shows ACTIVE there.
 *
 * Moves: active ⇄ suspended (suspend, reinstate); active, suspended or expired → revoked (final);
 * active → expired when the expiry passes; expired → active when the expiry is extended.
 * Trials: trial → expired when the trial ends, or when its buyer pays (the paid license is a new
 * one); trial ⇄ suspended and trial → revoked like active (reinstating a suspended trial gives
 * back the trial, not a paid license).
 */
export function clientStatus(status: LicenseStatus): string {
  return CLIENT_STATUS[status];
}

// A table rather than toUpperCase: every verify answers with one, and a table allocates nothing.
// The database admits exactly these statuses (a check constraint on licenses.status).
const CLIENT_STATUS: Record<LicenseStatus, string> = {
  active: 'ACTIVE',
  trial: 'TRIAL',
  suspended: 'SUSPENDED',
  revoked: 'REVOKED',
  expired: 'EXPIRED',
};

/** Whether a license grants use now: paid and active, or in its trial. */
export function grantsUse(status: LicenseStatus): boolean {
  return status === 'active' || status === 'trial';
}

/**
 * An active license or a trial whose expiry has passed counts as expired even before the job
 * marks it.
 */
export function effectiveStatus(status: LicenseStatus, expiresAt: Date | null, now: Date): LicenseStatus {
  return grantsUse(status) && expiresAt !== null && expiresAt.getTime() <= now.getTime() ? 'expired' : status;
}

/**
 * Whether an expired license keeps its access (expiry strategy maintain_access): verify answers
 * it valid, as EXPIRED. Never a trial, nor a license suspended or revoked.
 */
export function keepsAccess(
  license: {
    status: LicenseStatus;
    expires_at: Date | null;
    expiry_strategy: 'restrict' | 'maintain_access';
  },
  now: Date,
): boolean {
  return (
    license.expiry_strategy === 'maintain_access' &&
    (license.status === 'active' || license.status === 'expired') &&
    effectiveStatus(license.status, license.expires_at, now) === 'expired'
  );
}

/** The code a license that grants no use answers, by its status. */
export const REASON_OF_STATUS = {
  expired: 'license_expired',
  suspended: 'license_suspended',
  revoked: 'license_revoked',
} as const;
