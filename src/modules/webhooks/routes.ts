import type { HttpApp } from '../../platform/http/create-http-app.js';
import { principalOf } from '../../platform/http/principal.js';
import {
  AttemptLogList,
  DeliveryParams,
  PageNumberQuery,
  RotatedSecret,
  SendOutcome,
  Webhook,
  WebhookCreate,
  WebhookList,
  WebhookParams,
  WebhookUpdate,
  WebhookWithSecret,
} from './schemas.js';
import type { WebhookService } from './service.js';

export function registerWebhookRoutes(app: HttpApp, webhooks: WebhookService): void {
  const auth = { auth: 'seller' as const };

  app.post('/webhooks', {
    config: auth,
    schema: { tags: ['webhooks'], body: WebhookCreate, response: { 201: WebhookWithSecret } },
    handler: async (request, reply) =>
      reply.status(201).send(await webhooks.create(principalOf(request), request.body)),
  });

  app.get('/webhooks', {
    config: auth,
    schema: { tags: ['webhooks'], querystring: PageNumberQuery, response: { 200: WebhookList } },
    handler: (request) => webhooks.list(principalOf(request), request.query),
  });

  app.get('/webhooks/:id', {
    config: auth,
    schema: { tags: ['webhooks'], params: WebhookParams, response: { 200: Webhook } },
    handler: (request) => webhooks.get(principalOf(request), request.params.id),
  });

  app.put('/webhooks/:id', {
    config: auth,
    schema: { tags: ['webhooks'], params: WebhookParams, body: WebhookUpdate, response: { 200: Webhook } },
    handler: (request) => webhooks.update(principalOf(request), request.params.id, request.body),
  });

  app.delete('/webhooks/:id', {
    config: auth,
    schema: { tags: ['webhooks'], params: WebhookParams },
    handler: async (request, reply) => {
      await webhooks.remove(principalOf(request), request.params.id);
      return reply.status(204).send();
    },
  });

  for (const [action, enabled] of [
    ['enable', true],
    ['disable', false],
  ] as const) {
    app.post(`/webhooks/:id/${action}`, {
      config: auth,
      schema: { tags: ['webhooks'], params: WebhookParams, response: { 200: Webhook } },
      handler: (request) => webhooks.setEnabled(principalOf(request), request.params.id, enabled),
    });
  }

  app.post('/webhooks/:id/rotate-secret', {
    config: auth,
    schema: { tags: ['webhooks'], params: WebhookParams, response: { 200: RotatedSecret } },
    handler: (request) => webhooks.rotateSecret(principalOf(request), request.params.id),
  });

  app.post('/webhooks/:id/test', {
    config: auth,
    schema: { tags: ['webhooks'], params: WebhookParams, response: { 200: SendOutcome } },
    handler: (request) => webhooks.sendTest(principalOf(request), request.params.id),
  });

  app.post('/webhooks/:id/deliveries/:deliveryId/redeliver', {
    config: auth,
    schema: { tags: ['webhooks'], params: DeliveryParams, response: { 200: SendOutcome } },
    handler: (request) =>
      webhooks.redeliver(principalOf(request), request.params.id, request.params.deliveryId),
  });

  app.get('/webhooks/:id/logs', {
    config: auth,
    schema: {
      tags: ['webhooks'],
      params: WebhookParams,
      querystring: PageNumberQuery,
      response: { 200: AttemptLogList },
    },
    handler: (request) => webhooks.logs(principalOf(request), request.params.id, request.query),
  });
}
