import type { Executor } from '../../platform/db/database.js';
import type { LicenseRow } from '../../platform/db/schema.js';
import { iso, isoOrNull } from '../../platform/http/schemas.js';
import { type CoreEventType, recordEvent } from '../events/index.js';

/** A license event, in the transaction of the change that causes it (outbox). */
export async function recordLicenseEvent(
  executor: Executor,
  type: Extract<CoreEventType, `license.${'created' | 'updated' | 'revoked' | 'expired'}`>,
  row: LicenseRow,
  now: Date,
) {
  await recordEvent(executor, {
    type,
    userId: row.user_id,
    appId: row.app_id,
    data: {
      id: row.id,
      licenseKey: row.key,
      userId: row.user_id,
      productId: row.product_id,
      status: row.status,
      expiresAt: isoOrNull(row.expires_at),
      createdAt: iso(row.created_at),
    },
    occurredAt: now,
  });
}
