import type { HttpApp } from '../../platform/http/create-http-app.js';
import type { CreatedAnswer, PathValues } from '../../platform/http/created-location.js';
import { type IdempotentAnswer, idempotentAnswer } from '../../platform/http/idempotency.js';
import { principalOf } from '../../platform/http/principal.js';
import { APP_SCOPED, noContent } from '../../platform/http/responses.js';
import { type Artifact as ArtifactBody, type ArtifactService, artifactPath } from './artifacts.js';
import {
  Artifact,
  ArtifactList,
  ArtifactParams,
  ArtifactQuery,
  ExternalArtifactCreate,
  ReleaseParams,
} from './schemas.js';

const ARTIFACTS = '/apps/:appId/releases/:releaseId/artifacts';
const ARTIFACT = `${ARTIFACTS}/:filename`;

/** Where a created artifact is read: its GET, by name, platform and architecture. */
const locationOf = (artifact: CreatedAnswer, params: PathValues) =>
  artifactPath({
    app_id: String(params.appId),
    release_id: String(params.releaseId),
    filename: String(artifact.filename),
    platform: String(artifact.platform ?? ''),
    arch: String(artifact.arch ?? ''),
  });

/**
 * A release's files: uploaded by the seller (a session, or a CI job with the app's API key), or
 * named by the https address the seller hosts them at.
 */
export function registerArtifactRoutes(app: HttpApp, artifacts: ArtifactService): void {
  // The upload's body is the file itself, streamed to the store as it arrives: this route alone
  // takes application/octet-stream (any other type answers 415) and leaves the body unparsed.
  app.register(async (plugin) => {
    const scope = plugin as unknown as HttpApp;
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('application/octet-stream', (_request, _payload, done) => done(null));
    scope.put(ARTIFACT, {
      config: { auth: 'seller', location: locationOf },
      schema: {
        summary: 'Upload a release artifact (the raw bytes as the body, application/octet-stream)',
        description:
          'Streams the body to the artifact store, computing its size, SHA-256 and SHA-512; the artifact exists once every byte is stored (an interrupted upload leaves nothing). 201 for a new artifact; 200 when it replaces a draft’s file of the same name, platform and architecture, or repeats a published one’s exact bytes. Largest file: 100 MiB (free), 512 MiB (pro), 1 GiB (business), 2 GiB (enterprise), within the operator’s ARTIFACT_MAX_BYTES.',
        tags: ['releases'],
        params: ArtifactParams,
        querystring: ArtifactQuery,
        response: { 200: Artifact, 201: Artifact },
        errors: {
          ...APP_SCOPED,
          artifact_exists: 'a published release has other bytes under this name, platform and architecture',
          release_yanked: 'a yanked release takes no artifact',
          artifact_store_unavailable:
            'the artifact store (S3) cannot be reached right now; nothing was stored',
        },
      },
      handler: async (request, reply) => {
        const declared = request.headers['content-length'];
        try {
          const { artifact, created } = await artifacts.upload(
            principalOf(request),
            request.params.appId,
            request.params.releaseId,
            { filename: request.params.filename, ...request.query },
            { stream: request.raw, declaredLength: declared === undefined ? null : Number(declared) },
          );
          return reply.status(created ? 201 : 200).send(artifact);
        } catch (error) {
          // Refused before the body ended (too large, a wrong name): the rest is never read, so the
          // connection closes after the answer rather than wait for bytes nobody will send.
          if (!request.raw.complete) reply.header('connection', 'close');
          throw error;
        }
      },
    });
  });

  app.post(ARTIFACTS, {
    config: { auth: 'seller', idempotent: true, location: locationOf },
    schema: {
      summary: 'Add a release artifact the seller hosts (an https URL)',
      description:
        'Records a file kept at the seller’s own https address: the service never stores or fetches it, and download links send licensed clients there. Its size and digests are the seller’s word: a signed manifest is made only when size, sha256 and sha512 are all given, and electron-updater’s feed lists it only with size and sha512. The same name, platform and architecture rules as an upload: a draft’s file is replaced, a published release’s is not (409 artifact_exists), and the same declaration again answers the artifact as it is. Send an Idempotency-Key so a retried create is made once.',
      tags: ['releases'],
      params: ReleaseParams,
      body: ExternalArtifactCreate,
      response: { 201: Artifact },
      errors: {
        ...APP_SCOPED,
        artifact_exists: 'a published release has another file under this name, platform and architecture',
        release_yanked: 'a yanked release takes no artifact',
      },
    },
    handler: async (request, reply) =>
      reply
        .status(201)
        .send(
          await artifacts.addExternal(
            principalOf(request),
            request.params.appId,
            request.params.releaseId,
            request.body,
            idempotentAnswer(request) as IdempotentAnswer<ArtifactBody> | undefined,
          ),
        ),
  });

  app.get(ARTIFACTS, {
    config: { auth: 'seller' },
    schema: {
      summary: 'List a release’s artifacts',
      tags: ['releases'],
      params: ReleaseParams,
      response: { 200: ArtifactList },
      errors: APP_SCOPED,
    },
    handler: (request) =>
      artifacts.list(principalOf(request), request.params.appId, request.params.releaseId),
  });

  app.get(ARTIFACT, {
    config: { auth: 'seller' },
    schema: {
      summary: 'Get a release artifact',
      tags: ['releases'],
      params: ArtifactParams,
      querystring: ArtifactQuery,
      response: { 200: Artifact },
      errors: APP_SCOPED,
    },
    handler: (request) =>
      artifacts.get(principalOf(request), request.params.appId, request.params.releaseId, {
        filename: request.params.filename,
        ...request.query,
      }),
  });

  app.delete(ARTIFACT, {
    config: { auth: 'seller' },
    schema: {
      summary: 'Remove a draft release’s artifact',
      tags: ['releases'],
      params: ArtifactParams,
      querystring: ArtifactQuery,
      response: { 204: noContent('The artifact is removed') },
      errors: { ...APP_SCOPED, release_not_draft: 'a published release keeps its artifacts' },
    },
    handler: async (request, reply) => {
      await artifacts.remove(principalOf(request), request.params.appId, request.params.releaseId, {
        filename: request.params.filename,
        ...request.query,
      });
      return reply.status(204).send();
    },
  });
}
