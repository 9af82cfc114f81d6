export { LINKS_PER_ADDRESS_PER_HOUR, registerPortalRoutes } from './routes.js';
export { createPortalService, type PortalService } from './service.js';
export { LINK_MINUTES } from './sessions.js';
