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
  /** The card kept for off-session renewals, once a payment that asked to keep it succeeded. */
  savedCard: SavedCard | null;
}

/** A card kept at the partner: its customer (the subscription's partner id) and the card. */
export interface SavedCard {
  customerId: string;
  paymentMethodId: string;
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
    /** Keep the card for renewals charged later without the buyer (recurring products). */
    keepCard?: boolean;
  }): Promise<PartnerIntent>;
  retrieveIntent(id: string): Promise<PartnerIntent | null>;
  /**
   * Charges a kept card without the buyer present. The same idempotency key gives back the same
   * charge, so a repeated renewal never charges twice. A decline is a settled intent with its
   * failureMessage, not an exception.
   */
  chargeSavedCard(input: {
    card: SavedCard;
    amountMinor: number;
    currency: string;
    idempotencyKey: string;
  }): Promise<PartnerIntent>;
  /** Lets the card go: nothing can be charged to it any more. */
  releaseSavedCard(card: SavedCard): Promise<void>;
}
