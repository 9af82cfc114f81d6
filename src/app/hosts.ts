import type { Config } from '../platform/config.js';
import { registerCrossOriginRoutes } from '../platform/http/cors.js';
import { createHttpApp, type HttpApp } from '../platform/http/create-http-app.js';
import { registerFavicon } from '../platform/http/favicon.js';
import { registerIdempotency } from '../platform/http/idempotency-hooks.js';
import { registerRateLimits } from '../platform/http/rate-limit.js';
import { type ReferenceOptions, registerApiReference } from '../platform/http/reference/openapi.js';
import { createWindowCounter } from '../platform/http/window-counter.js';
import type { Log } from '../platform/log.js';
import type { RedisClient } from '../platform/redis.js';
import type { Modules } from './modules.js';

export interface HostDeps {
  modules: Modules;
  config: Config;
  log: Log;
  redis: RedisClient | null;
}

/**
 * An app for one host: the shared HTTP behaviour, rate-limit counters, the API reference (whose
 * generator must see every route), the icon, then the host's routes mounted under `prefix`. Both hosts are
 * built the same way over the same modules.
 */
export function buildHost(
  deps: HostDeps,
  options: {
    prefix: string;
    bearerTokens: boolean;
    reference: Omit<ReferenceOptions, 'bearerTokens' | 'prefix'>;
  },
  mount: (app: HttpApp) => void,
): HttpApp {
  const app = createHttpApp({
    log: deps.log,
    // Without an authenticator every bearer token is refused, so a route that forgets to
    // declare its own authentication stays closed.
    ...(options.bearerTokens ? { authenticate: deps.modules.authenticate } : {}),
    trustProxyHops: deps.config.trustProxyHops,
    responseContract: deps.config.responseContract,
    accessLog: deps.config.accessLog,
    metrics: deps.modules.metrics.http,
    overload: { maxInFlight: deps.config.maxInFlight, maxEventLoopDelayMs: deps.config.maxEventLoopDelayMs },
  });
  registerRateLimits(app, createWindowCounter(deps.redis));
  registerApiReference(app, {
    ...options.reference,
    prefix: options.prefix,
    bearerTokens: options.bearerTokens,
  });
  // At the root of both hosts, whatever their prefix: browsers look for it there. In a plugin,
  // like the routes below, so the reference's generator sees it.
  app.register(async (root) => {
    registerFavicon(root as unknown as HttpApp);
  });
  // Before the routes: its onRoute hook gives routes flagged `cors` their headers and preflight.
  registerCrossOriginRoutes(app);
  // Before the routes: its onRoute hook adds the Idempotency-Key header to flagged routes.
  registerIdempotency(app, deps.modules.idempotency, { crashAfterCommit: deps.config.testCrashAfterCommit });
  app.register(
    async (scope) => {
      mount(scope as unknown as HttpApp);
    },
    { prefix: options.prefix },
  );
  return app;
}
