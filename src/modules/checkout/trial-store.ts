import type { Executor } from '../../platform/db/database.js';
import { newId } from '../../platform/ids.js';

/**
 * The trial key's message to the buyer, queued in the transaction that issues the trial (the
 * mail outbox, sent by the notification worker like purchase notices).
 */
export async function queueTrialNotice(
  executor: Executor,
  trial: {
    userId: string;
    productId: string;
    productName: string;
    email: string;
    licenseKey: string;
    licenseId: string;
    trialDays: number;
    endsAt: Date;
    now: Date;
  },
) {
  await executor
    .insertInto('notifications')
    .values({
      id: newId(),
      kind: 'trial.buyer',
      to_email: trial.email,
      to_user_id: null,
      data: JSON.stringify({
        productId: trial.productId,
        productName: trial.productName,
        buyerEmail: trial.email,
        licenseKey: trial.licenseKey,
        licenseId: trial.licenseId,
        trialDays: trial.trialDays,
        trialEndsAt: trial.endsAt.toISOString(),
      }),
      created_at: trial.now,
    })
    .execute();
}
