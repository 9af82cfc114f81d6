export { actorOf, BILLING, BUYER, SYSTEM } from './actor.js';
export { keptAddress } from './client-address.js';
export { clientCallOf } from './client-call.js';
export { type ClientCall, createTimelineJournal, type TimelineJournal } from './journal.js';
export { registerTimelineRoutes } from './routes.js';
export { AppVersionHeader, TIMELINE_TYPES, type TimelineType } from './schemas.js';
export { createTimelineService, type TimelineService } from './service.js';
export {
  type Actor,
  type NewTimelineEntry,
  recordEntry,
  recordEntryById,
  type TimelineLicense,
} from './store.js';
