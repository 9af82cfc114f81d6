export { EVENT_DATA, type EventData } from './event-data.js';
export {
  COMMERCE_EVENT_TYPES,
  type CoreEventType,
  EVENT_TYPES,
  type EventType,
  MERCHANT_EVENT_TYPES,
  type MerchantEventType,
} from './event-types.js';
export {
  EVENTS_RECORDED_CHANNEL,
  eventsForUser,
  type NewEvent,
  type RecordedEvent,
  recordEvent,
  recordForMerchant,
} from './store.js';
