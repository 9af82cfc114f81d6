export { type ProbeThread, startProbeThread } from './probe-thread.js';
export { registerHealthRoutes, registerProbeRoutes } from './routes.js';
