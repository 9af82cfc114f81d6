import { registerLogoRoute } from '../modules/brand/index.js';
import { registerCheckoutRoutes } from '../modules/checkout/index.js';
import { registerHealthRoutes, registerProbeRoutes } from '../modules/health/index.js';
import { registerPortalRoutes } from '../modules/portal/index.js';
import { registerRenewalRoutes } from '../modules/subscriptions/index.js';
import type { HttpApp } from '../platform/http/create-http-app.js';
import { createWindowCounter } from '../platform/http/window-counter.js';
import { buildHost, type HostDeps } from './hosts.js';

/**
 * The checkout host ({pay_url}): hosted pages and /api/checkout routes, not under /v1. Seller
 * tokens and API keys are not accepted here; its routes are public or authenticated by a
 * product's callback secret.
 */
export function buildCheckoutApp(deps: HostDeps): HttpApp {
  const { modules } = deps;
  const reference = {
    title: 'Licensing service: checkout host',
    description:
      'Hosted checkout pages for buyers, and the checkout API sellers’ backends call (validate, renewal charges) and partners post to.',
    serverUrl: deps.config.payPublicUrl,
    serverDescription: '{pay_url}: the checkout host, not under the version segment',
    originUrl: deps.config.payPublicUrl,
    documentPath: '/openapi.json',
  };
  return buildHost(deps, { prefix: '', bearerTokens: false, reference }, (pay) => {
    registerHealthRoutes(pay, { ping: () => modules.database.ping() });
    registerProbeRoutes(pay, { ping: () => modules.database.ping() });
    registerCheckoutRoutes(pay, modules.checkout, modules.payments, {
      checkoutRateLimit: deps.config.checkoutRateLimit,
      validateRateLimit: deps.config.checkoutValidateRateLimit,
    });
    registerRenewalRoutes(pay, modules.renewals, { rateLimit: deps.config.checkoutRateLimit });
    // Sellers' logos, shown on the pages above and linked from buyers' e-mails.
    registerLogoRoute(pay, modules.brands);
    registerPortalRoutes(pay, modules.portal, {
      rateLimit: deps.config.checkoutRateLimit,
      counter: createWindowCounter(deps.redis),
    });
  });
}
