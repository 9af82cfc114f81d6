import type { FastifyRequest } from 'fastify';
import type { Static } from 'typebox';
import type { HttpApp } from '../../platform/http/create-http-app.js';
import { perMinute } from '../../platform/http/rate-limit.js';
import { noContent, seeOther } from '../../platform/http/responses.js';
import { textResponse } from '../../platform/http/schemas.js';
import { type ClientCall, clientCallOf } from '../timeline/index.js';
import { LICENSE_REFUSALS } from './distribution-routes.js';
import type { FeedClient, UpdaterFeeds } from './feeds.js';
import { credentialOf } from './grants.js';
import {
  ElectronFeedParams,
  ElectronFeedQuery,
  FeedFileParams,
  FeedFileQuery,
  FeedHeaders,
  TauriFeedParams,
  TauriFeedQuery,
  TauriUpdate,
} from './schemas.js';

/** The header names a refused credential is named by. */
const HEADER_NAMES = { key: 'Authorization', token: 'Authorization', hwuid: 'X-Device-Id' };

/**
 * The license an updater sends in its headers (FeedHeaders): `License <key>` with the device in
 * X-Device-Id, or `Bearer <license token>`; and where it called from.
 */
function feedClientOf(request: FastifyRequest, appId: string): { client: FeedClient; call: ClientCall } {
  const headers = request.headers as Static<typeof FeedHeaders>;
  const [, scheme = '', credential = ''] = /^(\S+) +(\S+)$/.exec(headers.authorization) ?? [];
  const bearer = scheme.toLowerCase() === 'bearer';
  const device = headers['x-device-id'];
  const fields = {
    ...(bearer ? { token: credential } : { key: credential }),
    ...(device ? { hwuid: device } : {}),
  };
  return { client: { appId, ...credentialOf(fields, HEADER_NAMES) }, call: clientCallOf(request) };
}

/**
 * Feeds for electron-updater and Tauri's updater, and the file address they name: public (the
 * license key or a license token, in a header, is the credential), limited like verify, no CORS
 * (an updater is no page), never cached (each answer is one license's).
 */
export function registerFeedRoutes(
  app: HttpApp,
  feeds: UpdaterFeeds,
  limits: { verifyRateLimit: number },
): void {
  const perAddress = perMinute(limits.verifyRateLimit);

  app.get('/releases/feeds/:appId/electron/:channelFile', {
    config: { auth: 'public', rateLimit: perAddress },
    schema: {
      summary: 'electron-updater channel file',
      description:
        'For electron-updater’s generic provider pointed at …/releases/feeds/<appId>/electron, with requestHeaders Authorization: License <key> and X-Device-Id: <hwuid> (or Authorization: Bearer <license token>). Checks the license as the update check does, then answers the channel file as electron-builder writes it (version, files with url, base64 sha512 and size, path, sha512, releaseNotes, releaseDate) for the newest release on the channel or a more stable one that has a file electron-updater installs on that platform: .exe on Windows (latest.yml), .zip (and .dmg) on macOS (latest-mac.yml), .AppImage, .deb, .rpm or .pacman on Linux (latest-linux.yml for x64, latest-linux-arm64.yml…). Yanked releases are never offered.',
      tags: ['releases'],
      params: ElectronFeedParams,
      querystring: ElectronFeedQuery,
      headers: FeedHeaders,
      response: { 200: textResponse('text/yaml', 'The channel file') },
      errors: {
        ...LICENSE_REFUSALS,
        not_found: 'no release the license may have on the channel has a file for this platform',
      },
    },
    handler: async (request, reply) => {
      const { client, call } = feedClientOf(request, request.params.appId);
      const yaml = await feeds.electron({ ...client, channelFile: request.params.channelFile }, call);
      return reply.header('cache-control', 'no-store').type('text/yaml; charset=utf-8').send(yaml);
    },
  });

  app.get('/releases/feeds/:appId/tauri/:target/:arch/:currentVersion', {
    config: { auth: 'public', rateLimit: perAddress },
    schema: {
      summary: 'Tauri updater endpoint',
      description:
        'For Tauri’s updater (v2), as the endpoint …/releases/feeds/<appId>/tauri/{{target}}/{{arch}}/{{current_version}}?bundleType={{bundle_type}} with the headers Authorization: License <key> and X-Device-Id: <hwuid> (or Authorization: Bearer <license token>). Checks the license as the update check does, then answers Tauri’s dynamic format (version, notes, pub_date, url, signature) for the newest release past the current version with a file for the target and architecture that has its .sig uploaded beside it; 204 when up to date. Yanked releases are never offered.',
      tags: ['releases'],
      params: TauriFeedParams,
      querystring: TauriFeedQuery,
      headers: FeedHeaders,
      response: { 200: TauriUpdate, 204: noContent('Up to date: no newer release for this license') },
      errors: LICENSE_REFUSALS,
    },
    handler: async (request, reply) => {
      reply.header('cache-control', 'no-store');
      const { appId, ...target } = request.params;
      const { client, call } = feedClientOf(request, appId);
      const update = await feeds.tauri({ ...client, ...target, ...request.query }, call);
      if (!update) return reply.status(204).send();
      return update;
    },
  });

  app.get('/releases/feeds/:appId/files/:version/:filename', {
    config: { auth: 'public', rateLimit: perAddress },
    schema: {
      summary: 'A file named by a feed',
      description:
        'The file addresses in the feeds, fetched by the updater with the same headers. Checks the license as a download link request does, then answers 303 to an hour-long download link.',
      tags: ['releases'],
      params: FeedFileParams,
      querystring: FeedFileQuery,
      headers: FeedHeaders,
      response: { 303: seeOther('On to a download link for the file, good for an hour') },
      errors: {
        ...LICENSE_REFUSALS,
        not_found: 'the app has no published release of this version, or it has no such file',
      },
    },
    handler: async (request, reply) => {
      const { appId, ...file } = request.params;
      const { client, call } = feedClientOf(request, appId);
      const link = await feeds.fileLink({ ...client, ...file, ...request.query }, call);
      return reply.header('cache-control', 'no-store').redirect(link, 303);
    },
  });
}
