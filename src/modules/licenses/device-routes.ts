import type { HttpApp } from '../../platform/http/create-http-app.js';
import { principalOf } from '../../platform/http/principal.js';
import { APP_SCOPED, noContent } from '../../platform/http/responses.js';
import { DeviceList, DeviceParams, LicenseParams, SeatList } from './schemas.js';
import type { LicenseService } from './service.js';

/** The devices bound to a license and the seats held on a floating one, listed and freed by the seller. */
export function registerDeviceRoutes(app: HttpApp, licenses: LicenseService): void {
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
