import { registerHealthRoutes } from '../modules/health/index.js';
import type { HttpApp } from '../platform/http/create-http-app.js';
import { buildHost, type HostDeps } from './hosts.js';

/** The checkout host ({pay_url}): hosted pages and /api/checkout routes, not under /v1. */
export function buildCheckoutApp(deps: HostDeps): HttpApp {
  const { modules } = deps;
  return buildHost(deps, '', (pay) => {
    registerHealthRoutes(pay, { ping: () => modules.database.ping() });
  });
}
