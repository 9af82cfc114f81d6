export { type CryptoPartner, createCryptoPartner } from './crypto-partner.js';
export type { SubscriptionOpener } from './deps.js';
export { addInterval } from './fulfil-order.js';
export { recordMerchantEvent, recordOrderPaid } from './order-events.js';
export type { PaymentPartner, SavedCard } from './partner.js';
export { registerPaymentRoutes } from './routes.js';
export { createSandboxPartner, SANDBOX_CARDS } from './sandbox-partner.js';
export { createPaymentService, type PaymentService } from './service.js';
export { moveOrder } from './store.js';
