import type { HttpApp } from '../../platform/http/create-http-app.js';
import { csvResponse, sendCsv } from '../../platform/http/csv.js';
import { type IdempotentAnswer, idempotentAnswer } from '../../platform/http/idempotency.js';
import { principalOf } from '../../platform/http/principal.js';
import { overNameLimit, perMinute } from '../../platform/http/rate-limit.js';
import { APP_SCOPED, noContent } from '../../platform/http/responses.js';
import { pageOf } from '../../platform/http/schemas.js';
import { AppParams } from '../apps/index.js';
import { AppVersionHeader, clientCallOf } from '../timeline/index.js';
import { verifyKeyLimitCeiling } from './key-rate-limit.js';
import { verificationLimitKey } from './license-key.js';
import { LICENSE_CSV_HEADER } from './lists.js';
import {
  AllLicensesQuery,
  CheckinResult,
  DeviceList,
  DeviceParams,
  IntrospectBody,
  IntrospectResult,
  License,
  LicenseCreate,
  LicenseExportQuery,
  LicenseList,
  LicenseListQuery,
  LicenseParams,
  LicenseUpdate,
  LicenseUsage,
  LicenseUsageSet,
  PolicyApplied,
  ProductPolicyParams,
  RevokeTokenBody,
  RevokeTokenResult,
  SeatBody,
  SeatList,
  UsageBody,
  UsageResult,
  type UsageResultType,
  ValidateHardwareBody,
  VerificationResult,
  VerifyBody,
} from './schemas.js';
import type { LicenseService } from './service.js';
import type { Verification } from './verification.js';

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

  app.get('/apps/:appId/licenses/:licenseId/devices', {
    config: { auth: 'seller' },
    schema: {
      summary: 'List the devices bound to a license',
      tags: ['licenses'],
      params: LicenseParams,
      response: { 200: DeviceList },
      errors: APP_SCOPED,
    },
    handler: (request) =>
      licenses.devices(principalOf(request), request.params.appId, request.params.licenseId),
  });

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

  app.get('/apps/:appId/licenses/:licenseId/seats', {
    config: { auth: 'seller' },
    schema: {
      summary: 'List the seats held on a floating license',
      description: 'Only leases that have not lapsed; a node-locked license has none.',
      tags: ['licenses'],
      params: LicenseParams,
      response: { 200: SeatList },
      errors: APP_SCOPED,
    },
    handler: (request) =>
      licenses.seats(principalOf(request), request.params.appId, request.params.licenseId),
  });

  app.delete('/apps/:appId/licenses/:licenseId/seats/:hwuid', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Take a floating license’s seat back',
      description:
        'Frees the seat the device holds at once, without waiting for its lease, with `license.seat.released` (reason `seller`). The device gets a seat again at its next checkout while one is free.',
      tags: ['licenses'],
      params: DeviceParams,
      response: { 204: noContent('The seat is free') },
      errors: {
        ...APP_SCOPED,
        not_found: 'the license does not exist, or the device holds no live seat on it',
      },
    },
    handler: async (request, reply) => {
      const { appId, licenseId, hwuid } = request.params;
      await licenses.releaseSeat(principalOf(request), appId, licenseId, hwuid);
      return reply.status(204).send();
    },
  });

  app.delete('/apps/:appId/licenses/:licenseId/devices/:hwuid', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Release a device from a license',
      description: 'Frees its seat, so another device can be bound.',
      tags: ['licenses'],
      params: DeviceParams,
      response: { 204: noContent('The device is released') },
      errors: APP_SCOPED,
    },
    handler: async (request, reply) => {
      const { appId, licenseId, hwuid } = request.params;
      await licenses.releaseDevice(principalOf(request), appId, licenseId, hwuid);
      return reply.status(204).send();
    },
  });
}

/** Answers about a key are for the caller alone and change: no cache may keep them. */
const NO_STORE = 'no-store';

/** The routes client software and sellers' backends call about keys and tokens. */
export function registerVerificationRoutes(
  app: HttpApp,
  verification: Verification,
  limits: { verifyRateLimit: number; verifyKeyRateLimit: number },
): void {
  // Per license key too, however it is typed, so one key cannot be hammered from many addresses.
  // A floating license's seats raise its limit (key-rate-limit.ts): past the plain limit, the
  // verification judges once it has looked the license up.
  const perKey = perMinute(limits.verifyRateLimit, {
    max: limits.verifyKeyRateLimit,
    ceiling: verifyKeyLimitCeiling(limits.verifyKeyRateLimit),
    name: (request) => verificationLimitKey(request.body),
  });
  const perAddress = perMinute(limits.verifyRateLimit);

  app.post('/licenses/verify', {
    config: { auth: 'public', cors: true, rateLimit: perKey, accessLog: 'quiet' },
    schema: {
      summary: 'Verify a license key',
      description:
        'For client software. A key that does not verify still answers 200, with valid false and a code saying why.',
      tags: ['licenses'],
      body: VerifyBody,
      headers: AppVersionHeader,
      response: { 200: VerificationResult },
    },
    // Not async: an answer from memory is sent at once; a promise (a read, a token) when it settles.
    handler: (request, reply) => {
      reply.header('cache-control', NO_STORE);
      return verification.verify(request.body, overNameLimit(request, reply), clientCallOf(request));
    },
  });

  app.post('/licenses/validate-hardware', {
    config: { auth: 'public', cors: true, rateLimit: perKey, accessLog: 'quiet' },
    schema: {
      summary: 'Verify a license key on a device, and get a license token',
      description:
        'Binds the device when a seat is free. When license tokens are on, a valid answer carries a signed token for offline checks.',
      tags: ['licenses'],
      body: ValidateHardwareBody,
      headers: AppVersionHeader,
      response: { 200: VerificationResult },
    },
    handler: (request, reply) => {
      reply.header('cache-control', NO_STORE);
      return verification.validateHardware(
        request.body,
        overNameLimit(request, reply),
        clientCallOf(request),
      );
    },
  });

  app.post('/licenses/checkout', {
    config: { auth: 'public', cors: true, rateLimit: perKey, accessLog: 'quiet' },
    schema: {
      summary: 'Take or keep a seat on a floating license',
      description:
        'Takes a seat for the device while one is free, or renews the lease of the seat it holds (call it again as a heartbeat before lease_expires_at). Answers like verify; no free seat is valid false with no_seat_available.',
      tags: ['licenses'],
      body: SeatBody,
      headers: AppVersionHeader,
      response: { 200: VerificationResult },
    },
    handler: async (request, reply) =>
      reply
        .header('cache-control', NO_STORE)
        .send(
          await verification.checkout(request.body, overNameLimit(request, reply), clientCallOf(request)),
        ),
  });

  app.post('/licenses/usage', {
    config: { auth: 'public', cors: true, rateLimit: perKey, accessLog: 'quiet', idempotent: true },
    schema: {
      summary: 'Consume uses of a license’s quota',
      description:
        'For client software metering what a license allows (exports, API calls, builds). Consumes `amount` uses of the current period, all or none: concurrent calls never take the count past the quota. A call that consumes nothing still answers 200, with consumed false and a code (usage_exhausted when the quota would be passed). Send an Idempotency-Key so a retried call counts once.',
      tags: ['licenses'],
      body: UsageBody,
      headers: AppVersionHeader,
      response: { 200: UsageResult },
    },
    handler: async (request, reply) =>
      reply
        .header('cache-control', NO_STORE)
        .send(
          await verification.consumeUsage(
            request.body,
            idempotentAnswer(request) as IdempotentAnswer<UsageResultType> | undefined,
            overNameLimit(request, reply),
            clientCallOf(request),
          ),
        ),
  });

  app.post('/licenses/checkin', {
    config: { auth: 'public', cors: true, rateLimit: perKey, accessLog: 'quiet' },
    schema: {
      summary: 'Give a floating license’s seat back',
      description:
        'Frees the device’s seat at once. A device holding no live seat answers released false with seat_not_held.',
      tags: ['licenses'],
      body: SeatBody,
      response: { 200: CheckinResult },
    },
    handler: async (request, reply) =>
      reply
        .header('cache-control', NO_STORE)
        .send(await verification.checkin(request.body, overNameLimit(request, reply))),
  });

  app.post('/licenses/introspect', {
    config: { auth: 'public', cors: true, rateLimit: perAddress },
    schema: {
      summary: 'Check a license token against the live license',
      description:
        'Verifies the signature and claims, then answers the license’s status now (active false once revoked).',
      tags: ['licenses'],
      body: IntrospectBody,
      response: { 200: IntrospectResult },
    },
    handler: async (request, reply) =>
      reply.header('cache-control', NO_STORE).send(await verification.introspect(request.body.license_token)),
  });

  app.post('/licenses/revoke-token', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Revoke one issued license token',
      tags: ['licenses'],
      body: RevokeTokenBody,
      response: { 200: RevokeTokenResult },
      errors: { not_found: 'no unexpired token of yours has this jti' },
    },
    handler: (request) => verification.revokeToken(principalOf(request), request.body.jti),
  });
}
