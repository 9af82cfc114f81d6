export {
  EVENT_TYPES,
  type EventType,
  isMerchantEvent,
  MERCHANT_EVENT_TYPES,
  type MerchantEventType,
} from './event-types.js';
export {
  EVENTS_RECORDED_CHANNEL,
  eventsForUser,
  type NewEvent,
  type RecordedEvent,
  recordEvent,
} from './store.js';
