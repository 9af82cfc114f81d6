export { createMailer, type Mailer, type OutgoingMail } from './mailer.js';
export { MAX_ATTEMPTS } from './retry-schedule.js';
export { createNotificationWorker, type NotificationWorker } from './worker.js';
