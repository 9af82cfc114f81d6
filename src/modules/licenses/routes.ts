import type { HttpApp } from '../../platform/http/create-http-app.js';
import { principalOf } from '../../platform/http/principal.js';
import { perMinute } from '../../platform/http/rate-limit.js';
import { pageOf } from '../../platform/http/schemas.js';
import { limitPerMinuteBy, type WindowCounter } from '../../platform/http/window-counter.js';
import { AppParams } from '../apps/index.js';
import { verificationLimitKey } from './license-key.js';
import {
  DeviceList,
  DeviceParams,
  IntrospectBody,
  IntrospectResult,
  License,
  LicenseCreate,
  LicenseList,
  LicenseListQuery,
  LicenseParams,
  LicenseUpdate,
  RevokeTokenBody,
  RevokeTokenResult,
  ValidateHardwareBody,
  VerificationResult,
  VerifyBody,
} from './schemas.js';
import type { LicenseService } from './service.js';
import type { Verification } from './verification.js';

export function registerLicenseRoutes(app: HttpApp, licenses: LicenseService): void {
  app.get('/apps/:appId/licenses', {
    config: { auth: 'seller' },
    schema: {
      tags: ['licenses'],
      params: AppParams,
      querystring: LicenseListQuery,
      response: { 200: LicenseList },
    },
    handler: (request) => {
      const { limit, offset, ...filter } = request.query;
      return licenses.list(principalOf(request), request.params.appId, filter, pageOf({ limit, offset }));
    },
  });

  app.post('/apps/:appId/licenses', {
    config: { auth: 'seller' },
    schema: { tags: ['licenses'], params: AppParams, body: LicenseCreate, response: { 201: License } },
    handler: async (request, reply) =>
      reply.status(201).send(await licenses.issue(principalOf(request), request.params.appId, request.body)),
  });

  app.get('/apps/:appId/licenses/:licenseId', {
    config: { auth: 'seller' },
    schema: { tags: ['licenses'], params: LicenseParams, response: { 200: License } },
    handler: (request) => licenses.get(principalOf(request), request.params.appId, request.params.licenseId),
  });

  app.patch('/apps/:appId/licenses/:licenseId', {
    config: { auth: 'seller' },
    schema: { tags: ['licenses'], params: LicenseParams, body: LicenseUpdate, response: { 200: License } },
    handler: (request) =>
      licenses.update(principalOf(request), request.params.appId, request.params.licenseId, request.body),
  });

  for (const action of ['suspend', 'revoke', 'reinstate'] as const) {
    app.post(`/apps/:appId/licenses/:licenseId/${action}`, {
      config: { auth: 'seller' },
      schema: { tags: ['licenses'], params: LicenseParams, response: { 200: License } },
      handler: (request) =>
        licenses[action](principalOf(request), request.params.appId, request.params.licenseId),
    });
  }

  app.get('/apps/:appId/licenses/:licenseId/devices', {
    config: { auth: 'seller' },
    schema: { tags: ['licenses'], params: LicenseParams, response: { 200: DeviceList } },
    handler: (request) =>
      licenses.devices(principalOf(request), request.params.appId, request.params.licenseId),
  });

  app.delete('/apps/:appId/licenses/:licenseId/devices/:hwuid', {
    config: { auth: 'seller' },
    schema: { tags: ['licenses'], params: DeviceParams },
    handler: async (request, reply) => {
      const { appId, licenseId, hwuid } = request.params;
      await licenses.releaseDevice(principalOf(request), appId, licenseId, hwuid);
      return reply.status(204).send();
    },
  });
}

/** The routes client software and sellers' backends call about keys and tokens. */
export function registerVerificationRoutes(
  app: HttpApp,
  verification: Verification,
  limits: { verifyRateLimit: number; verifyKeyRateLimit: number; counter: WindowCounter },
): void {
  const rateLimit = perMinute(limits.verifyRateLimit);
  // Per license key too, however it is typed, so one key cannot be hammered from many addresses.
  const perKey = limitPerMinuteBy(limits.counter, limits.verifyKeyRateLimit, (request) =>
    verificationLimitKey(request.body),
  );
  const noStore = { 'cache-control': 'no-store' };

  app.post('/licenses/verify', {
    config: { auth: 'public', rateLimit },
    preValidation: perKey,
    schema: { tags: ['licenses'], body: VerifyBody, response: { 200: VerificationResult } },
    handler: async (request, reply) => reply.headers(noStore).send(await verification.verify(request.body)),
  });

  app.post('/licenses/validate-hardware', {
    config: { auth: 'public', rateLimit },
    preValidation: perKey,
    schema: { tags: ['licenses'], body: ValidateHardwareBody, response: { 200: VerificationResult } },
    handler: async (request, reply) =>
      reply.headers(noStore).send(await verification.validateHardware(request.body)),
  });

  app.post('/licenses/introspect', {
    config: { auth: 'public', rateLimit },
    schema: { tags: ['licenses'], body: IntrospectBody, response: { 200: IntrospectResult } },
    handler: async (request, reply) =>
      reply.headers(noStore).send(await verification.introspect(request.body.license_token)),
  });

  app.post('/licenses/revoke-token', {
    config: { auth: 'seller' },
    schema: { tags: ['licenses'], body: RevokeTokenBody, response: { 200: RevokeTokenResult } },
    handler: (request) => verification.revokeToken(principalOf(request), request.body.jti),
  });
}
