export { EVENT_TYPES, type EventType } from './event-types.js';
export { eventsForUser, type NewEvent, type RecordedEvent, recordEvent } from './store.js';
