import type { LicenseStatus } from '../../platform/db/schema.js';

/**
 * The canonical statuses are lowercase (records, events, filters). Clients see them upper
 * case in verification results and token claims, as the interface shows ACTIVE there.
 *
 * Moves: active ⇄ suspended (suspend, reinstate); active, suspended or expired → revoked (final);
 * active → expired when the expiry passes; expired → active when the expiry is extended.
 */
export function clientStatus(status: LicenseStatus): string {
  return status.toUpperCase();
}

/** An active license whose expiry has passed counts as expired even before the job marks it. */
export function effectiveStatus(status: LicenseStatus, expiresAt: Date | null, now: Date): LicenseStatus {
  return status === 'active' && expiresAt !== null && expiresAt.getTime() <= now.getTime()
    ? 'expired'
    : status;
}
