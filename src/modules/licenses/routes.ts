import type { HttpApp } from '../../platform/http/create-http-app.js';
import { csvResponse, sendCsv } from '../../platform/http/csv.js';
import { idempotentAnswer } from '../../platform/http/idempotency.js';
import { principalOf } from '../../platform/http/principal.js';
import { APP_SCOPED } from '../../platform/http/responses.js';
import { pageOf } from '../../platform/http/schemas.js';
import { AppParams } from '../apps/index.js';
import { registerDeviceRoutes } from './device-routes.js';
import { LICENSE_CSV_HEADER } from './lists.js';
import {
  AllLicensesQuery,
  License,
  LicenseCreate,
  LicenseExportQuery,
  LicenseList,
  LicenseListQuery,
  LicenseParams,
  LicenseUpdate,
  PolicyApplied,
  ProductPolicyParams,
} from './schemas.js';
import type { LicenseService } from './service.js';
import { registerUsageRoutes } from './usage-routes.js';

const LIFECYCLE = {
  suspend: {
    summary: 'Suspend a license',
    description: 'Verification answers invalid until the license is reinstated.',
    conflict: 'the license is not active',
  },
  revoke: {
    summary: 'Revoke a license',
    description: 'For good: a revoked license cannot be reinstated.',
    conflict: 'the license is already revoked',
  },
  reinstate: {
    summary: 'Reinstate a suspended license',
    description: 'Verification answers valid again.',
    conflict: 'the license is not suspended',
  },
} as const;

/**
 * The seller's routes of licenses: lists, issuing, changes and the lifecycle here; a license's
 * devices and seats (device-routes.ts) and its usage count (usage-routes.ts) in files of their own.
 */
export function registerLicenseRoutes(app: HttpApp, licenses: LicenseService): void {
  app.get('/licenses', {
    config: { auth: 'seller' },
    schema: {
      summary: 'List your licenses across your apps',
      description:
        'The same filters, sort and answer as an app’s list, over all your apps (appId narrows it to one). An API key lists its own app’s licenses only, and naming another app answers 403. Newest first by default.',
      tags: ['licenses'],
      querystring: AllLicensesQuery,
      response: { 200: LicenseList },
      errors: { ...APP_SCOPED, not_found: 'appId names no app of yours' },
    },
    handler: (request) => {
      const { limit, offset, ...filter } = request.query;
      return licenses.listAll(principalOf(request), filter, pageOf({ limit, offset }));
    },
  });

  app.get('/licenses/export.csv', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Export your licenses as CSV',
      description: `Every license the list with the same filters and sort would show, without paging, streamed as CSV (RFC 4180, UTF-8, a header row) for a spreadsheet. Columns: ${LICENSE_CSV_HEADER.join(', ')}. A text cell starting with = + - @, a tab or a carriage return is prefixed with a single quote so a spreadsheet cannot run it as a formula.`,
      tags: ['licenses'],
      querystring: LicenseExportQuery,
      response: { 200: csvResponse('The licenses as a CSV download (licenses.csv)') },
      errors: { ...APP_SCOPED, not_found: 'appId names no app of yours' },
    },
    handler: async (request, reply) =>
      sendCsv(
        reply,
        'licenses.csv',
        LICENSE_CSV_HEADER,
        await licenses.exportAll(principalOf(request), request.query),
      ),
  });

  app.get('/apps/:appId/licenses', {
    config: { auth: 'seller' },
    schema: {
      summary: 'List an app’s licenses',
      description:
        'Newest first unless `sort` names another order; `email` matches any part of the address, ignoring case.',
      tags: ['licenses'],
      params: AppParams,
      querystring: LicenseListQuery,
      response: { 200: LicenseList },
      errors: APP_SCOPED,
    },
    handler: (request) => {
      const { limit, offset, ...filter } = request.query;
      return licenses.list(principalOf(request), request.params.appId, filter, pageOf({ limit, offset }));
    },
  });

  app.post('/apps/:appId/licenses', {
    config: {
      auth: 'seller',
      idempotent: true,
      location: (license, params) => `/apps/${params.appId}/licenses/${license.id}`,
    },
    schema: {
      summary: 'Issue a license for an app',
      tags: ['licenses'],
      params: AppParams,
      body: LicenseCreate,
      response: { 201: License },
      errors: APP_SCOPED,
    },
    handler: async (request, reply) =>
      reply
        .status(201)
        .send(
          await licenses.issue(
            principalOf(request),
            request.params.appId,
            request.body,
            idempotentAnswer(request),
          ),
        ),
  });

  app.post('/products/:id/license-policy/apply', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Apply a product’s license policy to its existing licenses',
      description:
        'Gives every license of the product its current policy’s device limit, or seats and lease, with `license.updated` for each one that changed. Licenses of the other kind (floating against node-locked), revoked licenses and trials keep theirs; expiry dates stay as issued. Answers the counts.',
      tags: ['products'],
      params: ProductPolicyParams,
      response: { 200: PolicyApplied },
      errors: { ...APP_SCOPED, not_found: 'the product does not exist or is another seller’s' },
    },
    handler: (request) => licenses.applyProductPolicy(principalOf(request), request.params.id),
  });

  app.post('/apps/:appId/licenses/:licenseId/regenerate-key', {
    config: { auth: 'seller', idempotent: true },
    schema: {
      summary: 'Give a license a new key',
      description:
        'Same license, devices, seats and history under a new key; the old key answers `license_not_found` at once on every node. `license.updated` is sent, and the buyer is mailed the new key when the product mails licenses to buyers.',
      tags: ['licenses'],
      params: LicenseParams,
      response: { 200: License },
      errors: APP_SCOPED,
    },
    handler: (request) =>
      licenses.regenerateKey(
        principalOf(request),
        request.params.appId,
        request.params.licenseId,
        idempotentAnswer(request),
      ),
  });

  app.get('/apps/:appId/licenses/:licenseId', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Get a license',
      tags: ['licenses'],
      params: LicenseParams,
      response: { 200: License },
      errors: APP_SCOPED,
    },
    handler: (request) => licenses.get(principalOf(request), request.params.appId, request.params.licenseId),
  });

  app.patch('/apps/:appId/licenses/:licenseId', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Change a license',
      tags: ['licenses'],
      params: LicenseParams,
      body: LicenseUpdate,
      response: { 200: License },
      errors: APP_SCOPED,
    },
    handler: (request) =>
      licenses.update(principalOf(request), request.params.appId, request.params.licenseId, request.body),
  });

  for (const action of ['suspend', 'revoke', 'reinstate'] as const) {
    app.post(`/apps/:appId/licenses/:licenseId/${action}`, {
      config: { auth: 'seller' },
      schema: {
        summary: LIFECYCLE[action].summary,
        description: LIFECYCLE[action].description,
        tags: ['licenses'],
        params: LicenseParams,
        response: { 200: License },
        errors: { ...APP_SCOPED, conflict: LIFECYCLE[action].conflict },
      },
      handler: (request) =>
        licenses[action](principalOf(request), request.params.appId, request.params.licenseId),
    });
  }

  registerDeviceRoutes(app, licenses);
  registerUsageRoutes(app, licenses);
}
