import type { HttpApp } from '../../platform/http/create-http-app.js';
import { principalOf } from '../../platform/http/principal.js';
import { APP_SCOPED } from '../../platform/http/responses.js';
import { LicenseParams, LicenseUsage, LicenseUsageSet } from './schemas.js';
import type { LicenseService } from './service.js';

/**
 * A license's usage count, for the seller: read, corrected or reset. Client software consumes
 * uses through POST /licenses/usage (verification-routes.ts).
 */
export function registerUsageRoutes(app: HttpApp, licenses: LicenseService): void {
  app.get('/apps/:appId/licenses/:licenseId/usage', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Read a license’s usage quota and count',
      description: 'The count of the current period (a day or month that has passed counts as 0).',
      tags: ['licenses'],
      params: LicenseParams,
      response: { 200: LicenseUsage },
      errors: APP_SCOPED,
    },
    handler: (request) =>
      licenses.usage(principalOf(request), request.params.appId, request.params.licenseId),
  });

  app.put('/apps/:appId/licenses/:licenseId/usage', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Set the count of a license’s current period',
      description:
        'A correction, or `{"uses": 0}` to reset it. The quota itself (maxUses, usesResetInterval) is changed with PATCH on the license. A license without a quota answers 400 naming maxUses.',
      tags: ['licenses'],
      params: LicenseParams,
      body: LicenseUsageSet,
      response: { 200: LicenseUsage },
      errors: APP_SCOPED,
    },
    handler: (request) =>
      licenses.setUsage(
        principalOf(request),
        request.params.appId,
        request.params.licenseId,
        request.body.uses,
      ),
  });

  app.post('/apps/:appId/licenses/:licenseId/usage/reset', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Reset a license’s usage count to zero',
      description: 'The same as setting `{"uses": 0}`.',
      tags: ['licenses'],
      params: LicenseParams,
      response: { 200: LicenseUsage },
      errors: APP_SCOPED,
    },
    handler: (request) =>
      licenses.setUsage(principalOf(request), request.params.appId, request.params.licenseId, 0),
  });
}
