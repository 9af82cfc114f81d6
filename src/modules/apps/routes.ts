import type { HttpApp } from '../../platform/http/create-http-app.js';
import { idempotentAnswer } from '../../platform/http/idempotency.js';
import { principalOf } from '../../platform/http/principal.js';
import { APP_SCOPED, noContent } from '../../platform/http/responses.js';
import { pageOf } from '../../platform/http/schemas.js';
import { App, AppCreate, AppList, AppListQuery, AppParams, AppUpdate } from './schemas.js';
import type { AppService } from './service.js';

export function registerAppRoutes(app: HttpApp, apps: AppService): void {
  app.post('/apps', {
    config: { auth: 'user', idempotent: true, location: (created) => `/apps/${created.id}` },
    schema: { summary: 'Create an app', tags: ['apps'], body: AppCreate, response: { 201: App } },
    handler: async (request, reply) =>
      reply
        .status(201)
        .send(await apps.create(principalOf(request), request.body, idempotentAnswer(request))),
  });

  app.get('/apps', {
    config: { auth: 'seller' },
    schema: {
      summary: 'List your apps',
      description: 'With an API key, only the key’s own app.',
      tags: ['apps'],
      querystring: AppListQuery,
      response: { 200: AppList },
    },
    handler: (request) => apps.list(principalOf(request), pageOf(request.query)),
  });

  app.get('/apps/:appId', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Get an app',
      tags: ['apps'],
      params: AppParams,
      response: { 200: App },
      errors: APP_SCOPED,
    },
    handler: (request) => apps.get(principalOf(request), request.params.appId),
  });

  app.patch('/apps/:appId', {
    config: { auth: 'user' },
    schema: {
      summary: 'Rename or describe an app, or change how its tokens and license files are signed',
      tags: ['apps'],
      params: AppParams,
      body: AppUpdate,
      response: { 200: App },
    },
    handler: (request) => apps.update(principalOf(request), request.params.appId, request.body),
  });

  app.delete('/apps/:appId', {
    config: { auth: 'user' },
    schema: {
      summary: 'Delete an app',
      description: 'Deletes the app and its API keys.',
      tags: ['apps'],
      params: AppParams,
      response: { 204: noContent('The app is deleted') },
      errors: { app_in_use: 'products, licenses or releases still belong to the app' },
    },
    handler: async (request, reply) => {
      await apps.remove(principalOf(request), request.params.appId);
      return reply.status(204).send();
    },
  });
}
