import type { LicenseRow } from '../../platform/db/schema.js';
import { notFound } from '../../platform/errors.js';
import type { Principal } from '../../platform/http/principal.js';
import { iso, isoOrNull } from '../../platform/http/schemas.js';
import type { LicenseServiceDeps } from './deps.js';
import type { LicenseResource } from './schemas.js';
import * as store from './store.js';
import { checkInDeadline } from './terms.js';

/*
 * A license as the seller's API reaches it: found under one of the seller's apps, and answered
 * as a LicenseResource.
 */

/** Finds the seller's license under one of their apps, or 404: where every seller use case starts. */
export function licenseFinder({ db, apps }: Pick<LicenseServiceDeps, 'db' | 'apps'>) {
  return async function requireLicense(
    principal: Principal,
    appId: string,
    licenseId: string,
  ): Promise<LicenseRow> {
    const app = await apps.requireOwnedApp(principal, appId);
    const license = await store.findAppLicense(db, app.id, licenseId);
    if (!license) throw notFound('License');
    return license;
  };
}

export function toLicense(row: LicenseRow): LicenseResource {
  return {
    id: row.id,
    key: row.key,
    appId: row.app_id,
    productId: row.product_id,
    userId: row.user_id,
    email: row.email,
    status: row.status,
    expiresAt: isoOrNull(row.expires_at),
    metadata: row.metadata,
    maxDevices: row.max_devices,
    deviceCount: row.device_count,
    features: row.features,
    floating: row.floating,
    maxSeats: row.max_seats,
    leaseSeconds: row.lease_seconds,
    trialEndsAt: isoOrNull(row.trial_ends_at),
    convertedAt: isoOrNull(row.converted_at),
    checkInDays: row.check_in_days,
    graceDays: row.grace_days,
    lastCheckInAt: row.check_in_days === null ? null : iso(row.checked_in_at ?? row.created_at),
    checkInBy: isoOrNull(checkInDeadline(row)),
    expiryStrategy: row.expiry_strategy,
    maxUses: row.max_uses,
    usesResetInterval: row.uses_reset_interval,
    lastVerifiedAt: isoOrNull(row.last_verified_at),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
  };
}
