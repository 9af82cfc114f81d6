import { registerDashboardRoutes } from '../dashboard/index.js';
import { registerAnalyticsRoutes } from '../modules/analytics/index.js';
import { registerApiKeyRoutes } from '../modules/api-keys/index.js';
import { registerAppRoutes } from '../modules/apps/index.js';
import { registerBrandRoutes, registerLogoRoute } from '../modules/brand/index.js';
import { registerHealthRoutes, registerProbeRoutes } from '../modules/health/index.js';
import { registerKeySetRoutes } from '../modules/license-tokens/index.js';
import {
  registerLicenseRoutes,
  registerOfflineLicenseRoutes,
  registerVerificationRoutes,
} from '../modules/licenses/index.js';
import { registerPaymentRoutes } from '../modules/payments/index.js';
import { registerProductRoutes } from '../modules/products/index.js';
import {
  registerArtifactRoutes,
  registerDistributionRoutes,
  registerFeedRoutes,
  registerReleaseRoutes,
} from '../modules/releases/index.js';
import { registerSubscriptionRoutes } from '../modules/subscriptions/index.js';
import { registerTimelineRoutes } from '../modules/timeline/index.js';
import { registerUserRoutes } from '../modules/users/index.js';
import { registerWebhookRoutes, webhookReference } from '../modules/webhooks/index.js';
import type { HttpApp } from '../platform/http/create-http-app.js';
import { buildHost, type HostDeps } from './hosts.js';

/** The core API host: every route under /v1, and the web pages for people at its root. */
export function buildCoreApp(deps: HostDeps): HttpApp {
  const { modules, config } = deps;
  const reference = {
    title: 'Licensing service: core API',
    description:
      'Sellers, apps, API keys, products, licenses and their verification, releases, webhooks, payments and subscriptions. Paths are relative to {base_url}, which ends in /v1; the pages for people and the probes at the root name the origin as their server.',
    serverUrl: config.apiBaseUrl,
    serverDescription: '{base_url}: the core API, version 1',
    originUrl: config.publicOrigin,
    documentPath: '/v1/openapi.json',
    webhooks: webhookReference(),
  };
  const app = buildHost(deps, { prefix: '/v1', bearerTokens: true, reference }, (api) => {
    registerHealthRoutes(api, { ping: () => modules.database.ping() });
    registerUserRoutes(api, modules.users, { authRateLimit: config.authRateLimit });
    registerBrandRoutes(api, modules.brands);
    registerLogoRoute(api, modules.brands);
    registerAppRoutes(api, modules.apps);
    registerApiKeyRoutes(api, modules.apiKeys);
    registerProductRoutes(api, modules.products);
    registerLicenseRoutes(api, modules.licenses);
    registerTimelineRoutes(api, modules.timeline);
    registerVerificationRoutes(api, modules.verification, {
      verifyRateLimit: config.verifyRateLimit,
      verifyKeyRateLimit: config.verifyKeyRateLimit,
    });
    registerKeySetRoutes(api, modules.keyRing);
    registerOfflineLicenseRoutes(api, modules.offlineActivation, { verifyRateLimit: config.verifyRateLimit });
    registerWebhookRoutes(api, modules.webhooks);
    registerPaymentRoutes(api, modules.payments, { checkoutRateLimit: config.checkoutRateLimit });
    registerSubscriptionRoutes(api, modules.subscriptions);
    registerAnalyticsRoutes(api, modules.analytics);
    registerReleaseRoutes(api, modules.releases);
    registerArtifactRoutes(api, modules.artifacts);
    registerDistributionRoutes(api, modules.distribution, { verifyRateLimit: config.verifyRateLimit });
    registerFeedRoutes(api, modules.feeds, { verifyRateLimit: config.verifyRateLimit });
  });
  // Pages for people (outside /v1): they use the public API like any other client.
  app.register(async (root) => {
    const pages = root as unknown as HttpApp;
    registerDashboardRoutes(pages);
    // Probes at the root (/healthz, /readyz), as load balancers and Kubernetes expect them.
    registerProbeRoutes(pages, { ping: () => modules.database.ping() });
  });
  return app;
}
