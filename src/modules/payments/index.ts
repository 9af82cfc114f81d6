export { type CryptoPartner, createCryptoPartner } from './crypto-partner.js';
export { addInterval, recordMerchantEvent } from './fulfil-order.js';
export type { PaymentPartner, SavedCard } from './partner.js';
export { registerPaymentRoutes } from './routes.js';
export { createSandboxPartner, SANDBOX_CARDS } from './sandbox-partner.js';
export { createPaymentService, type PaymentService } from './service.js';
export { moveOrder } from './store.js';
