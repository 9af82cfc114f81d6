import type { Db } from '../../platform/db/database.js';
import type { Log } from '../../platform/log.js';
import * as store from './store.js';

/** Endpoints answering nothing but failures for this long are disabled. */
export const SUSTAINED_FAILURE_MS = 5 * 24 * 60 * 60_000;

/**
 * Switches off the endpoints a settled chunk shows to be gone. Its own failure is only logged:
 * the outcomes are on record, and the next failure of the endpoint decides again.
 */
export async function disableGoneEndpoints(
  { db, log }: { db: Db; log: Log },
  chunk: store.Settlement[],
  endpoints: Awaited<ReturnType<typeof store.settleAttempts>>,
  kinds: Map<string, 'core' | 'merchant'>,
): Promise<void> {
  for (const endpoint of endpoints) {
    // A merchant endpoint is switched by its product's merchantWebhookUrl alone (sellers have
    // no enable route for it), so its failures retry and end as failed but never switch it off.
    if (kinds.get(endpoint.id) !== 'core' || !endpoint.enabled) continue;
    const failures = chunk.filter((s) => s.record.endpointId === endpoint.id && !s.record.success);
    const lastFailure = failures.at(-1)?.record.at;
    if (!lastFailure) continue;
    let reason: string | null = null;
    if (failures.some((s) => s.record.statusCode === 410)) reason = 'the receiver answered 410 Gone';
    else if (
      endpoint.failing_since &&
      lastFailure.getTime() - endpoint.failing_since.getTime() >= SUSTAINED_FAILURE_MS
    )
      reason = 'every delivery failed for 5 days';
    if (!reason) continue;
    try {
      await store.setEndpointEnabled(db, endpoint.id, false, reason, lastFailure);
      log.warn({ endpointId: endpoint.id }, 'webhook.endpoint.disabled');
    } catch (err) {
      log.warn(
        { err: { message: (err as Error).message }, endpointId: endpoint.id },
        'webhook.endpoint.disable_failed',
      );
    }
  }
}
