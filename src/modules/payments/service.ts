import { createCryptoPayments } from './crypto-payments.js';
import type { PaymentServiceDeps } from './deps.js';
import { createFulfilment } from './fulfil-order.js';
import { createOrderOpening } from './open-order.js';
import { createPartnerEvents } from './partner-events.js';
import { createSellerReads } from './seller-reads.js';

export type { PaymentServiceDeps } from './deps.js';

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
    exportOrders: sellerReads.exportOrders,
    listDisputes: sellerReads.listDisputes,
    getDispute: sellerReads.getDispute,
    getOrder: sellerReads.getOrder,
  };
}
