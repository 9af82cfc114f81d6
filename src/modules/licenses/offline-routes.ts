import Type from 'typebox';
import type { HttpApp } from '../../platform/http/create-http-app.js';
import { principalOf } from '../../platform/http/principal.js';
import { perMinute } from '../../platform/http/rate-limit.js';
import { noContent } from '../../platform/http/responses.js';
import { Timestamp, Uuid } from '../../platform/http/schemas.js';
import type { OfflineActivation } from './offline-activation.js';

const OfflineActivationBody = Type.Object(
  {
    request: Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'The activation request the offline machine wrote (base64url JSON)',
    }),
    validDays: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 3650,
        description: 'Days the file is valid; a year by default, never past the license expiry',
      }),
    ),
    encrypt: Type.Optional(
      Type.Boolean({ description: 'Encrypt the file so only the license key opens it (JWE dir + A256GCM)' }),
    ),
  },
  { additionalProperties: false },
);

const OfflineActivationResult = Type.Object({
  licenseId: Uuid,
  appId: Uuid,
  hwuid: Type.String(),
  nonce: Type.String({ description: 'Echoed from the request, and in the file' }),
  activated: Type.Boolean({
    description: 'True when this request bound the device; false when it was bound already',
  }),
  encrypted: Type.Boolean(),
  licenseFile: Type.String({
    description:
      'Compact JWS (signed with the offline key of the app’s tokenAlgorithm: RS256 or EdDSA; token_use service_license_file_v1), or a compact JWE around it',
  }),
  issuedAt: Timestamp,
  expiresAt: Timestamp,
});

const RevocationsQuery = Type.Object({ appId: Uuid }, { additionalProperties: false });

const RevocationListResult = Type.Object({
  appId: Uuid,
  version: Type.Integer({
    description:
      'Grows whenever the list’s entries change and never goes back: of two lists, the one with the greater version is newer',
  }),
  count: Type.Integer({ description: 'Licenses on the list' }),
  revocationList: Type.String({
    description:
      'Compact JWS (signed with the offline key of the app’s tokenAlgorithm: RS256 or EdDSA; token_use service_revocation_list_v1) with revoked: [{sub, at}], version, iat, exp',
  }),
  issuedAt: Timestamp,
  expiresAt: Timestamp,
});

/** Offline activation (the seller's support hands in a machine's request) and the revocation list. */
export function registerOfflineLicenseRoutes(
  app: HttpApp,
  offline: OfflineActivation,
  limits: { verifyRateLimit: number },
): void {
  app.post('/licenses/offline-activations', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Activate a device offline and get its signed license file',
      description:
        'Binds the device named in an air-gapped machine’s activation request, exactly like an online activation, and answers a license file it checks offline. The device is held until the file expires: its buyer cannot release it in the portal before then (the seller can).',
      tags: ['licenses'],
      body: OfflineActivationBody,
      response: { 200: OfflineActivationResult },
      errors: {
        not_found: 'no license of yours (of this API key’s app) has the request’s key',
        license_suspended: 'the license is suspended',
        license_revoked: 'the license is revoked',
        license_expired: 'the license has expired',
        license_trial: 'the license is in its trial; trials are activated online',
        license_floating: 'the license is floating: its seats are leases renewed online',
        device_limit_reached: 'every device place of the license is taken; release a device first',
        conflict:
          'license signing is off on this installation, or the device was released while its file was being signed',
      },
    },
    handler: async (request, reply) =>
      reply
        .header('cache-control', 'no-store')
        .send(await offline.activate(principalOf(request), request.body)),
  });

  app.get('/licenses/revocations', {
    config: { auth: 'public', cors: true, rateLimit: perMinute(limits.verifyRateLimit) },
    schema: {
      summary: 'The signed revocation list of an app',
      description:
        'The app’s revoked and suspended licenses, signed with the offline key, for machines that check license files offline. Public: it names license ids only.',
      tags: ['licenses'],
      querystring: RevocationsQuery,
      response: {
        200: RevocationListResult,
        304: noContent('Not modified: the copy named by If-None-Match is current'),
      },
      errors: {
        not_found: 'no such app',
        conflict: 'license signing is off on this installation',
      },
    },
    handler: async (request, reply) => {
      const answer = await offline.revocations(request.query.appId, request.headers['if-none-match']);
      reply.headers({ 'cache-control': 'public, max-age=300', etag: answer.etag });
      if (answer.notModified) return reply.status(304).send();
      return answer.list;
    },
  });
}
