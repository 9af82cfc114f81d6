export { registerHealthRoutes } from './routes.js';
