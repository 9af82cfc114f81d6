import { registerApiKeyRoutes } from '../modules/api-keys/index.js';
import { registerAppRoutes } from '../modules/apps/index.js';
import { registerHealthRoutes } from '../modules/health/index.js';
import { registerUserRoutes } from '../modules/users/index.js';
import { createHttpApp, type HttpApp } from '../platform/http/create-http-app.js';
import type { Log } from '../platform/log.js';
import type { Modules } from './modules.js';

/** The core API host: every route under /v1. */
export function buildCoreApp(modules: Modules, log: Log): HttpApp {
  const app = createHttpApp({ log, authenticate: modules.authenticate });
  app.register(
    async (v1) => {
      const api = v1 as unknown as HttpApp;
      registerHealthRoutes(api, { ping: () => modules.database.ping() });
      registerUserRoutes(api, modules.users);
      registerAppRoutes(api, modules.apps);
      registerApiKeyRoutes(api, modules.apiKeys);
    },
    { prefix: '/v1' },
  );
  return app;
}
