import { randomBytes } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { PartnerIntent, PaymentPartner } from './partner.js';

/**
 * The built-in card partner used when no real one is configured: test mode only, no money
 * moves. A payment is paid with a test card number:
 */
export const SANDBOX_CARDS = {
  '4242424242424242': null,
  '4000000000000002': 'Your card was declined.',
  '4000000000009995': 'Your card has insufficient funds.',
} as const satisfies Record<string, string | null>;

export type SandboxPartner = PaymentPartner & {
  /** What the buyer's card form does at the real partner: pay the intent with a card. */
  pay(id: string, card: string): Promise<PartnerIntent | null>;
};

export function createSandboxPartner({ db, clock }: { db: Db; clock: Clock }): SandboxPartner {
  const read = async (id: string) => {
    const row = await db.selectFrom('sandbox_payments').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toIntent(row) : null;
  };
  return {
    name: 'sandbox',
    testMode: true,
    async createIntent({ amountMinor, currency, idempotencyKey }) {
      const now = clock.now();
      const id = `sb_pi_${randomBytes(12).toString('hex')}`;
      // Like the partner's idempotency keys: the same key gives back the same intent.
      await db
        .insertInto('sandbox_payments')
        .values({
          id,
          idempotency_key: idempotencyKey,
          amount_minor: amountMinor,
          currency,
          status: 'requires_payment_method',
          client_secret: `${id}_secret_${randomBytes(16).toString('hex')}`,
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) => oc.column('idempotency_key').doNothing())
        .execute();
      const row = await db
        .selectFrom('sandbox_payments')
        .selectAll()
        .where('idempotency_key', '=', idempotencyKey)
        .executeTakeFirstOrThrow();
      return toIntent(row);
    },
    retrieveIntent: read,
    async pay(id, card) {
      const failure = (SANDBOX_CARDS as Record<string, string | null>)[card.replace(/\s/g, '')];
      const message = failure === undefined ? 'This is not a sandbox test card.' : failure;
      await db
        .updateTable('sandbox_payments')
        .set(
          message === null
            ? { status: 'succeeded', failure_message: null, updated_at: clock.now() }
            : { failure_message: message, updated_at: clock.now() },
        )
        .where('id', '=', id)
        .where('status', '=', 'requires_payment_method')
        .execute();
      return read(id);
    },
  };
}

function toIntent(row: {
  id: string;
  client_secret: string;
  status: string;
  amount_minor: number;
  currency: string;
  failure_message: string | null;
}): PartnerIntent {
  return {
    id: row.id,
    clientSecret: row.client_secret,
    status: row.status as PartnerIntent['status'],
    amountMinor: Number(row.amount_minor),
    currency: row.currency,
    failureMessage: row.failure_message,
  };
}
