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
  // Pays, and is kept for renewals, but every later off-session charge is declined.
  '4000000000000341': null,
} as const satisfies Record<string, string | null>;

const RENEWALS_DECLINED: ReadonlySet<string> = new Set(['4000000000000341']);

export type SandboxPartner = PaymentPartner & {
  /** What the buyer's card form does at the real partner: pay the intent with a card. */
  pay(id: string, card: string): Promise<PartnerIntent | null>;
};

const CARD_PREFIX = 'sb_pm_';

export function createSandboxPartner({ db, clock }: { db: Db; clock: Clock }): SandboxPartner {
  const read = async (id: string) => {
    const row = await db.selectFrom('sandbox_payments').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toIntent(row) : null;
  };
  // Like the partner's idempotency keys: the same key gives back the same payment.
  async function insertOnce(values: {
    idempotencyKey: string;
    amountMinor: number;
    currency: string;
    status: string;
    failureMessage?: string | null;
    customerId?: string | null;
  }) {
    const now = clock.now();
    const id = `sb_pi_${randomBytes(12).toString('hex')}`;
    await db
      .insertInto('sandbox_payments')
      .values({
        id,
        idempotency_key: values.idempotencyKey,
        amount_minor: values.amountMinor,
        currency: values.currency,
        status: values.status,
        failure_message: values.failureMessage ?? null,
        customer_id: values.customerId ?? null,
        client_secret: `${id}_secret_${randomBytes(16).toString('hex')}`,
        created_at: now,
        updated_at: now,
      })
      .onConflict((oc) => oc.column('idempotency_key').doNothing())
      .execute();
    const row = await db
      .selectFrom('sandbox_payments')
      .selectAll()
      .where('idempotency_key', '=', values.idempotencyKey)
      .executeTakeFirstOrThrow();
    return toIntent(row);
  }
  return {
    name: 'sandbox',
    testMode: true,
    createIntent({ amountMinor, currency, idempotencyKey, keepCard }) {
      return insertOnce({
        idempotencyKey,
        amountMinor,
        currency,
        status: 'requires_payment_method',
        customerId: keepCard ? `sb_cus_${randomBytes(12).toString('hex')}` : null,
      });
    },
    retrieveIntent: read,
    async pay(id, card) {
      const number = card.replace(/\s/g, '');
      const failure = (SANDBOX_CARDS as Record<string, string | null>)[number];
      const message = failure === undefined ? 'This is not a sandbox test card.' : failure;
      await db
        .updateTable('sandbox_payments')
        .set(
          message === null
            ? { status: 'succeeded', failure_message: null, card: number, updated_at: clock.now() }
            : { failure_message: message, updated_at: clock.now() },
        )
        .where('id', '=', id)
        .where('status', '=', 'requires_payment_method')
        .execute();
      return read(id);
    },
    async chargeSavedCard({ card, amountMinor, currency, idempotencyKey }) {
      const origin = card.paymentMethodId.startsWith(CARD_PREFIX)
        ? await db
            .selectFrom('sandbox_payments')
            .selectAll()
            .where('id', '=', card.paymentMethodId.slice(CARD_PREFIX.length))
            .where('customer_id', '=', card.customerId)
            .executeTakeFirst()
        : undefined;
      const failure =
        !origin?.card || origin.saved_released_at
          ? 'The saved card is no longer available.'
          : RENEWALS_DECLINED.has(origin.card)
            ? 'Your card was declined.'
            : null;
      return insertOnce({
        idempotencyKey,
        amountMinor,
        currency,
        status: failure ? 'requires_payment_method' : 'succeeded',
        failureMessage: failure,
        customerId: card.customerId,
      });
    },
    async releaseSavedCard(card) {
      if (!card.paymentMethodId.startsWith(CARD_PREFIX)) return;
      await db
        .updateTable('sandbox_payments')
        .set({ saved_released_at: clock.now(), updated_at: clock.now() })
        .where('id', '=', card.paymentMethodId.slice(CARD_PREFIX.length))
        .where('saved_released_at', 'is', null)
        .execute();
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
  card: string | null;
  customer_id: string | null;
}): PartnerIntent {
  return {
    id: row.id,
    clientSecret: row.client_secret,
    status: row.status as PartnerIntent['status'],
    amountMinor: Number(row.amount_minor),
    currency: row.currency,
    failureMessage: row.failure_message,
    savedCard:
      row.status === 'succeeded' && row.customer_id && row.card
        ? { customerId: row.customer_id, paymentMethodId: `${CARD_PREFIX}${row.id}` }
        : null,
  };
}
