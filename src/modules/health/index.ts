export { registerHealthRoutes, registerProbeRoutes } from './routes.js';
