import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import type { Log } from '../../platform/log.js';
import type { LicenseService } from '../licenses/index.js';
import type { ProductService } from '../products/index.js';
import type { CryptoPartner } from './crypto-partner.js';
import { createCryptoPayments } from './crypto-payments.js';
import { createFulfilment, type SubscriptionOpener } from './fulfil-order.js';
import { createOrderOpening } from './open-order.js';
import type { PaymentPartner } from './partner.js';
import { createPartnerEvents, type PartnerEvent } from './partner-events.js';
import type { SandboxPartner } from './sandbox-partner.js';
import { createSellerReads } from './seller-reads.js';

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

export type PaymentService = ReturnType<typeof createPaymentService>;

/** The payments module's one service, composed of its use cases; this is its whole surface. */
export function createPaymentService(deps: PaymentServiceDeps) {
  const opening = createOrderOpening(deps);
  const fulfilment = createFulfilment(deps);
  const cryptoPayments = createCryptoPayments({ ...deps, opening, fulfilment });
  const partnerEvents = createPartnerEvents({ ...deps, fulfilment });
  const sellerReads = createSellerReads(deps);
  return {
    createPaymentIntent: opening.createPaymentIntent,
    startCryptoPayment: cryptoPayments.startCryptoPayment,
    receiveCryptoEvent: cryptoPayments.receiveCryptoEvent,
    checkoutReceipt: fulfilment.checkoutReceipt,
    findPaidPurchase: fulfilment.findPaidPurchase,
    confirmPayment: fulfilment.confirmPayment,
    receivePartnerEvent: partnerEvents.receivePartnerEvent,
    transactionStatus: sellerReads.transactionStatus,
    transactions: sellerReads.transactions,
    listOrders: sellerReads.listOrders,
    listDisputes: sellerReads.listDisputes,
    getDispute: sellerReads.getDispute,
    getOrder: sellerReads.getOrder,
  };
}
