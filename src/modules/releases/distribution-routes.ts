import path from 'node:path';
import send from '@fastify/send';
import type { FastifyReply } from 'fastify';
import { AppError } from '../../platform/errors.js';
import type { HttpApp } from '../../platform/http/create-http-app.js';
import { perMinute } from '../../platform/http/rate-limit.js';
import { found, noContent } from '../../platform/http/responses.js';
import { textResponse } from '../../platform/http/schemas.js';
import { AppVersionHeader, clientCallOf } from '../timeline/index.js';
import type { Distribution } from './distribution.js';
import { credentialOf } from './grants.js';
import {
  DownloadableArtifact,
  DownloadBody,
  FileParams,
  FileQuery,
  Upgrade,
  UpgradeBody,
} from './schemas.js';

/** The license refusals these routes answer with, by the verification's codes. */
export const LICENSE_REFUSALS = {
  hwuid_required: 'the license binds devices and no hwuid was sent',
  device_not_bound: 'the device is not one the license has bound',
  device_limit_reached: 'a new device, and every device place of the license is taken',
  seat_required: 'a floating license: the device must hold a seat (check one out first)',
  check_in_overdue: 'the license is past its check-in deadline: verify online first',
  license_not_found: 'no license of this app has this key',
  license_suspended: 'the license is suspended',
  license_revoked: 'the license is revoked',
  license_expired:
    'the license has expired (one keeping access receives releases published before its expiry only)',
  trial_already_used: 'the device already had a trial of this product',
  channel_not_granted: 'the license’s channel: entitlements do not include this channel',
  feature_not_granted: 'the release requires an entitlement the license does not grant',
  token_expired: 'the license token has expired: verify again for a fresh one',
  token_revoked: 'the license token was revoked by its seller',
  invalid_signature: 'the license token’s signature is not the service’s (tampered, or another key)',
  invalid_token:
    'not a license token of this service (malformed, another use, an algorithm its key does not have)',
} as const;

/**
 * What client software calls to stay up to date: the update check and a download link, both
 * public (the license key or a license token is the credential) and limited like verify; and
 * the links' files.
 */
export function registerDistributionRoutes(
  app: HttpApp,
  distribution: Distribution,
  limits: { verifyRateLimit: number },
): void {
  const perAddress = perMinute(limits.verifyRateLimit);

  app.post('/releases/upgrade', {
    config: { auth: 'public', cors: true, rateLimit: perAddress },
    schema: {
      summary: 'Check for an update',
      description:
        'For client software, with the license key (and the device) or a license token verify signed. Checks the license as verify does (without a check-in; a token as introspection does, then its license as it is now), then answers the newest published release it may have that is newer than currentVersion on its channel or a more stable one, with its artifacts for the platform and architecture and links to their bytes; 204 when the client is up to date. Yanked releases are never offered.',
      tags: ['releases'],
      body: UpgradeBody,
      headers: AppVersionHeader,
      response: { 200: Upgrade, 204: noContent('Up to date: no newer release for this license') },
      errors: LICENSE_REFUSALS,
    },
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const { key, token, hwuid, ...asked } = request.body;
      const offered = await distribution.upgrade(
        { ...asked, ...credentialOf({ key, token, hwuid }) },
        clientCallOf(request),
      );
      if (!offered) return reply.status(204).send();
      return offered;
    },
  });

  app.post('/releases/download', {
    config: { auth: 'public', cors: true, rateLimit: perAddress },
    schema: {
      summary: 'Get a download link for a release artifact',
      description:
        'For client software and download pages, with the license key (and the device) or a license token. Checks the license as the update check does, then answers a link to the artifact’s bytes that works for an hour (range requests resume it).',
      tags: ['releases'],
      body: DownloadBody,
      headers: AppVersionHeader,
      response: { 200: DownloadableArtifact },
      errors: {
        ...LICENSE_REFUSALS,
        not_found: 'the app has no published release of this version, or it has no such artifact',
      },
    },
    handler: (request, reply) => {
      reply.header('cache-control', 'no-store');
      const { key, token, hwuid, ...asked } = request.body;
      return distribution.download(
        { ...asked, ...credentialOf({ key, token, hwuid }) },
        clientCallOf(request),
      );
    },
  });

  // No CORS: a link is followed by a download (a browser's or an updater's), not read by a page.
  app.get('/releases/files/:artifactId/:filename', {
    config: { auth: 'public' },
    schema: {
      summary: 'Download an artifact through a link',
      description:
        'The link from an update check or a download request. Answers the bytes (206 with a range: a download resumes), or, where the operator keeps artifacts in S3, 302 to a presigned URL of the store that serves them (ranges too) and works for the rest of the link’s hour; for a file the seller hosts, 302 to the seller’s https address, which the service never fetches. 403 download_link_invalid for a link the service did not make, 410 download_link_expired past its hour, 404 once the release is yanked.',
      tags: ['releases'],
      params: FileParams,
      querystring: FileQuery,
      response: {
        200: textResponse('application/octet-stream', 'The artifact’s bytes'),
        206: textResponse('application/octet-stream', 'The range of the artifact’s bytes asked for'),
        302: found(
          'Elsewhere serves the bytes: the artifact store (S3), by a presigned URL saved under the artifact’s file name, or the seller’s own host for a file they host',
        ),
      },
      errors: {
        download_link_invalid: 'the signature is not the service’s, or the link was changed',
        download_link_expired: 'the link is past its hour: ask for the update again',
        not_found: 'the artifact is gone, or its release is yanked',
        range_not_satisfiable: 'the Range asked for lies outside the file (Content-Range names its size)',
        precondition_failed: 'an If-Unmodified-Since the stored file does not meet',
        artifact_store_unavailable: 'the artifact store (S3) cannot be reached right now',
      },
    },
    handler: async (request, reply) => {
      const range = request.headers.range;
      const file = await distribution.file(
        request.params.artifactId,
        request.query,
        range === undefined || /^bytes=0-/.test(range),
      );
      if (file.download.kind === 'redirect') {
        // A fresh presigned URL each time, or a seller's address a later link may no longer name:
        // nothing may keep it past this answer.
        return reply.header('cache-control', 'no-store').redirect(file.download.url, 302);
      }
      const stored = file.download.path;
      // @fastify/send answers ranges (206, 416, If-Range against Last-Modified: the stored file's
      // time, which changes only when the same bytes are stored again) and conditional requests
      // as RFC 9110 says.
      const sent = await send(request.raw, `/${path.basename(stored)}`, {
        root: path.dirname(stored),
        acceptRanges: true,
        cacheControl: false,
        lastModified: true,
        etag: false,
      });
      if (sent.type === 'error' && sent.statusCode === 416) {
        reply.header('content-range', sent.headers['Content-Range'] ?? '');
        throw new AppError('range_not_satisfiable', 'The range asked for lies outside the file');
      }
      if (sent.type === 'error' && sent.statusCode === 412) {
        throw new AppError('precondition_failed', 'The file is not the one the request’s conditions name');
      }
      if (sent.type !== 'file') {
        request.log.error(
          { err: sent.type === 'error' ? sent.metadata.error : undefined },
          'release.file.missing',
        );
        throw new Error(`The stored bytes of artifact ${request.params.artifactId} cannot be read`);
      }
      // A stream and send's own status (200, 206, 304): past what the declared schema types.
      const untyped = reply as unknown as FastifyReply;
      return untyped
        .status(sent.statusCode)
        .headers(sent.headers)
        .header('content-type', 'application/octet-stream')
        .header('content-disposition', `attachment; filename="${file.filename}"`)
        .header('cache-control', 'private, no-cache')
        .header('x-content-type-options', 'nosniff')
        .send(sent.stream);
    },
  });
}
