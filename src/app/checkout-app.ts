import { registerHealthRoutes } from '../modules/health/index.js';
import { createHttpApp, type HttpApp } from '../platform/http/create-http-app.js';
import type { Log } from '../platform/log.js';
import type { Modules } from './modules.js';

/** The checkout host ({pay_url}): hosted pages and /api/checkout routes, not under /v1. */
export function buildCheckoutApp(modules: Modules, log: Log): HttpApp {
  const app = createHttpApp({ log, authenticate: modules.authenticate });
  registerHealthRoutes(app, { ping: () => modules.database.ping() });
  return app;
}
