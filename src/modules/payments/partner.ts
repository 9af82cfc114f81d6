/**
 * What the service needs from a card partner, shaped after a payment intent: create one for an
 * amount, and read its state back. Fulfilment always re-reads the partner; it never takes the
 * buyer's word for a payment.
 */
export type IntentStatus = 'requires_payment_method' | 'processing' | 'succeeded' | 'canceled';

export interface PartnerIntent {
  id: string;
  clientSecret: string;
  status: IntentStatus;
  amountMinor: number;
  currency: string;
  /** Why the last attempt to pay failed, when it did. */
  failureMessage: string | null;
}

export interface PaymentPartner {
  /** The name orders and transactions carry as paymentProvider. */
  readonly name: string;
  readonly testMode: boolean;
  createIntent(input: {
    amountMinor: number;
    currency: string;
    idempotencyKey: string;
    email: string;
  }): Promise<PartnerIntent>;
  retrieveIntent(id: string): Promise<PartnerIntent | null>;
}
