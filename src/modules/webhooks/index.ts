export { createDeliveryWorker, type DeliveryWorker } from './delivery-worker.js';
export { webhookReference } from './event-reference.js';
export { registerWebhookRoutes } from './routes.js';
export { createSender, type Sender } from './sender.js';
export { createWebhookService, type WebhookService } from './service.js';
export { purgeAttempts } from './store.js';
export { refuseUrl, type TargetPolicy } from './target-guard.js';
export { verifyBodySignature } from './webhook-signature.js';
