import type { Clock } from '../../platform/clock.js';
import type { Db, Executor } from '../../platform/db/database.js';
import type { BillingInterval, OrderRow } from '../../platform/db/schema.js';
import type { Log } from '../../platform/log.js';
import type { LicenseService } from '../licenses/index.js';
import type { ProductService } from '../products/index.js';
import type { CryptoPartner } from './crypto-partner.js';
import type { PaymentPartner, SavedCard } from './partner.js';
import type { SandboxPartner } from './sandbox-partner.js';

/*
 * What the payments service is built from, shared by service.ts (which composes the use cases)
 * and each use-case file (which takes it): in a file of its own, so neither imports the other.
 */

export interface PaymentServiceDeps {
  db: Db;
  clock: Clock;
  log: Log;
  partner: PaymentPartner | SandboxPartner;
  /** The crypto partner, when configured; products with cryptoPaymentsEnabled may use it. */
  crypto: CryptoPartner | null;
  products: Pick<ProductService, 'forCheckout'>;
  licenses: Pick<LicenseService, 'issueForPurchase' | 'moveForPayment' | 'keyOf'>;
  /** Opens the subscription a recurring purchase starts, inside the fulfilment's transaction. */
  openSubscription: SubscriptionOpener;
  /**
   * Checks a partner webhook's signature and returns its event; throws when it does not hold.
   * Null when the partner sends no webhooks (the sandbox).
   */
  verifyPartnerEvent: ((rawBody: string, signature: string) => PartnerEvent) | null;
}

export type SubscriptionOpener = (
  trx: Executor,
  input: {
    order: OrderRow;
    licenseId: string;
    savedCard: SavedCard;
    interval: BillingInterval;
    currentPeriodEnd: Date;
    now: Date;
  },
) => Promise<{ id: string }>;

/** The part of a partner event this service reads. */
export interface PartnerEvent {
  id: string;
  type: string;
  data: {
    object: {
      id?: string;
      object?: string;
      payment_intent?: string | null;
      amount?: number;
      currency?: string;
      reason?: string;
      status?: string;
      evidence_details?: { due_by?: number | null } | null;
    };
  };
}
