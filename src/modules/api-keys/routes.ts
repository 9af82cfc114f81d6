import type { HttpApp } from '../../platform/http/create-http-app.js';
import { idempotentAnswer } from '../../platform/http/idempotency.js';
import { principalOf } from '../../platform/http/principal.js';
import { noContent } from '../../platform/http/responses.js';
import { pageOf } from '../../platform/http/schemas.js';
import { AppParams } from '../apps/index.js';
import { ApiKeyCreate, ApiKeyList, ApiKeyListQuery, ApiKeyParams, CreatedApiKey } from './schemas.js';
import type { ApiKeyService } from './service.js';

/** Keys are managed from a signed-in session only: an API key cannot mint or revoke keys. */
export function registerApiKeyRoutes(app: HttpApp, keys: ApiKeyService): void {
  app.post('/apps/:appId/api-keys', {
    // A key has no route of its own; the app's list shows it (never its secret again).
    config: { auth: 'user', idempotent: true, location: (_key, params) => `/apps/${params.appId}/api-keys` },
    schema: {
      summary: 'Create an API key for an app',
      description: 'The key itself is in this answer only; store it, it cannot be read again.',
      tags: ['api-keys'],
      params: AppParams,
      body: ApiKeyCreate,
      response: { 201: CreatedApiKey },
    },
    handler: async (request, reply) =>
      reply
        .status(201)
        .send(
          await keys.create(
            principalOf(request),
            request.params.appId,
            request.body,
            idempotentAnswer(request),
          ),
        ),
  });

  app.get('/apps/:appId/api-keys', {
    config: { auth: 'user' },
    schema: {
      summary: 'List an app’s API keys',
      description: 'Prefixes and dates only, never the keys.',
      tags: ['api-keys'],
      params: AppParams,
      querystring: ApiKeyListQuery,
      response: { 200: ApiKeyList },
    },
    handler: (request) => keys.list(principalOf(request), request.params.appId, pageOf(request.query)),
  });

  app.delete('/apps/:appId/api-keys/:keyId', {
    config: { auth: 'user' },
    schema: {
      summary: 'Revoke an API key',
      tags: ['api-keys'],
      params: ApiKeyParams,
      response: { 204: noContent('The key is revoked and refused from now on') },
    },
    handler: async (request, reply) => {
      await keys.revoke(principalOf(request), request.params.appId, request.params.keyId);
      return reply.status(204).send();
    },
  });
}
