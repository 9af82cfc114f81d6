import type { HttpApp } from '../../platform/http/create-http-app.js';
import { principalOf } from '../../platform/http/principal.js';
import { pageOf } from '../../platform/http/schemas.js';
import { App, AppCreate, AppList, AppListQuery, AppParams, AppUpdate } from './schemas.js';
import type { AppService } from './service.js';

export function registerAppRoutes(app: HttpApp, apps: AppService): void {
  app.post('/apps', {
    config: { auth: 'user' },
    schema: { tags: ['apps'], body: AppCreate, response: { 201: App } },
    handler: async (request, reply) =>
      reply.status(201).send(await apps.create(principalOf(request), request.body)),
  });

  app.get('/apps', {
    config: { auth: 'seller' },
    schema: { tags: ['apps'], querystring: AppListQuery, response: { 200: AppList } },
    handler: (request) => apps.list(principalOf(request), pageOf(request.query)),
  });

  app.get('/apps/:appId', {
    config: { auth: 'seller' },
    schema: { tags: ['apps'], params: AppParams, response: { 200: App } },
    handler: (request) => apps.get(principalOf(request), request.params.appId),
  });

  app.patch('/apps/:appId', {
    config: { auth: 'user' },
    schema: { tags: ['apps'], params: AppParams, body: AppUpdate, response: { 200: App } },
    handler: (request) => apps.update(principalOf(request), request.params.appId, request.body),
  });

  app.delete('/apps/:appId', {
    config: { auth: 'user' },
    schema: { tags: ['apps'], params: AppParams },
    handler: async (request, reply) => {
      await apps.remove(principalOf(request), request.params.appId);
      return reply.status(204).send();
    },
  });
}
