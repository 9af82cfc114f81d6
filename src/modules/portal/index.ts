export { LINKS_PER_ADDRESS_PER_HOUR, registerPortalRoutes } from './routes.js';
export { createPortalService, LINK_MINUTES, type PortalService } from './service.js';
