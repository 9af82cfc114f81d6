import type { HttpApp } from '../../platform/http/create-http-app.js';
import { type IdempotentAnswer, idempotentAnswer } from '../../platform/http/idempotency.js';
import { principalOf } from '../../platform/http/principal.js';
import { APP_SCOPED, noContent } from '../../platform/http/responses.js';
import { pageOf } from '../../platform/http/schemas.js';
import { AppParams } from '../apps/index.js';
import {
  DownloadsQuery,
  Release,
  ReleaseCreate,
  ReleaseDownloads,
  ReleaseList,
  ReleaseListQuery,
  ReleaseParams,
  ReleaseUpdate,
} from './schemas.js';
import type { Release as ReleaseBody, ReleaseService } from './service.js';

/** The seller's routes for an app's releases: sessions and the app's own API keys (a CI job's). */
export function registerReleaseRoutes(app: HttpApp, releases: ReleaseService): void {
  app.post('/apps/:appId/releases', {
    config: {
      auth: 'seller',
      idempotent: true,
      location: (release, params) => `/apps/${params.appId}/releases/${release.id}`,
    },
    schema: {
      summary: 'Create a release (a draft)',
      description:
        'A draft is seen by no client until it is published. Send an Idempotency-Key so a retried create makes one release.',
      tags: ['releases'],
      params: AppParams,
      body: ReleaseCreate,
      response: { 201: Release },
      errors: { ...APP_SCOPED, release_exists: 'the app has a release of this version' },
    },
    handler: async (request, reply) =>
      reply
        .status(201)
        .send(
          await releases.create(
            principalOf(request),
            request.params.appId,
            request.body,
            idempotentAnswer(request) as IdempotentAnswer<ReleaseBody> | undefined,
          ),
        ),
  });

  app.get('/apps/:appId/releases', {
    config: { auth: 'seller' },
    schema: {
      summary: 'List an app’s releases, newest version first',
      tags: ['releases'],
      params: AppParams,
      querystring: ReleaseListQuery,
      response: { 200: ReleaseList },
      errors: APP_SCOPED,
    },
    handler: (request) => {
      const { channel, status, ...page } = request.query;
      return releases.list(
        principalOf(request),
        request.params.appId,
        { ...(channel ? { channel } : {}), ...(status ? { status } : {}) },
        pageOf(page),
      );
    },
  });

  app.get('/apps/:appId/releases/:releaseId', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Get a release',
      tags: ['releases'],
      params: ReleaseParams,
      response: { 200: Release },
      errors: APP_SCOPED,
    },
    handler: (request) => releases.get(principalOf(request), request.params.appId, request.params.releaseId),
  });

  app.get('/apps/:appId/releases/:releaseId/downloads', {
    config: { auth: 'seller' },
    schema: {
      summary: 'A release’s downloads per day',
      description:
        'Downloads through license-gated links (a resumed download counts once, on the day it started) per UTC day from the day holding `from` (default: 29 days before `to`’s day) to the day holding `to` (default: now), at most 366 days: for the release, and for each of its artifacts. Every day is present, zero when empty.',
      tags: ['releases'],
      params: ReleaseParams,
      querystring: DownloadsQuery,
      response: { 200: ReleaseDownloads },
      errors: {
        ...APP_SCOPED,
        validation_failed:
          'A malformed `from` or `to`, `from` not before `to`, more than 366 days, or another parameter; the detail names the field',
      },
    },
    handler: (request) =>
      releases.downloads(principalOf(request), request.params.appId, request.params.releaseId, request.query),
  });

  app.patch('/apps/:appId/releases/:releaseId', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Change a release’s notes, channel, required features, or a draft’s version',
      tags: ['releases'],
      params: ReleaseParams,
      body: ReleaseUpdate,
      response: { 200: Release },
      errors: {
        ...APP_SCOPED,
        release_exists: 'the app has a release of the new version',
        release_not_draft: 'the version of a published release does not change',
        release_yanked: 'a yanked release does not change',
      },
    },
    handler: (request) =>
      releases.update(principalOf(request), request.params.appId, request.params.releaseId, request.body),
  });

  app.post('/apps/:appId/releases/:releaseId/publish', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Publish a release',
      description:
        'Offers the release to the licenses its channel and required features allow, and sends release.published. Publishing a published release answers it unchanged.',
      tags: ['releases'],
      params: ReleaseParams,
      response: { 200: Release },
      errors: { ...APP_SCOPED, release_yanked: 'a yanked release is never published again' },
    },
    handler: (request) =>
      releases.publish(principalOf(request), request.params.appId, request.params.releaseId),
  });

  app.post('/apps/:appId/releases/:releaseId/yank', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Yank a published release',
      description:
        'The release is never offered again and its version stays taken; sends release.yanked. Yanking a yanked release answers it unchanged.',
      tags: ['releases'],
      params: ReleaseParams,
      response: { 200: Release },
      errors: { ...APP_SCOPED, release_not_draft: 'a draft is deleted, not yanked' },
    },
    handler: (request) => releases.yank(principalOf(request), request.params.appId, request.params.releaseId),
  });

  app.delete('/apps/:appId/releases/:releaseId', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Delete a draft release',
      tags: ['releases'],
      params: ReleaseParams,
      response: { 204: noContent('The draft is deleted') },
      errors: { ...APP_SCOPED, release_not_draft: 'only drafts are deleted; yank a published release' },
    },
    handler: async (request, reply) => {
      await releases.remove(principalOf(request), request.params.appId, request.params.releaseId);
      return reply.status(204).send();
    },
  });
}
