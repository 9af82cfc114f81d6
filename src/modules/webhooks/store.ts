// The rooms of one concern each, read through this one door: callers keep `store.…`.
export * from './attempt-log-store.js';
export * from './delivery-queue-store.js';
export * from './endpoint-store.js';
export * from './fan-out-store.js';
