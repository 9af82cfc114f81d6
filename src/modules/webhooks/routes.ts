import type { HttpApp } from '../../platform/http/create-http-app.js';
import { idempotentAnswer } from '../../platform/http/idempotency.js';
import { principalOf } from '../../platform/http/principal.js';
import { APP_SCOPED, noContent } from '../../platform/http/responses.js';
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
    config: { ...auth, idempotent: true, location: (endpoint) => `/webhooks/${endpoint.id}` },
    schema: {
      summary: 'Register a webhook endpoint',
      description: 'The signing secret is in this answer; one is generated when the body has none.',
      tags: ['webhooks'],
      body: WebhookCreate,
      response: { 201: WebhookWithSecret },
      errors: { ...APP_SCOPED, not_found: 'the app named by appId does not exist or is another seller’s' },
    },
    handler: async (request, reply) =>
      reply
        .status(201)
        .send(await webhooks.create(principalOf(request), request.body, idempotentAnswer(request))),
  });

  app.get('/webhooks', {
    config: auth,
    schema: {
      summary: 'List your webhook endpoints',
      tags: ['webhooks'],
      querystring: PageNumberQuery,
      response: { 200: WebhookList },
    },
    handler: (request) => webhooks.list(principalOf(request), request.query),
  });

  app.get('/webhooks/:id', {
    config: auth,
    schema: {
      summary: 'Get a webhook endpoint',
      tags: ['webhooks'],
      params: WebhookParams,
      response: { 200: Webhook },
      errors: APP_SCOPED,
    },
    handler: (request) => webhooks.get(principalOf(request), request.params.id),
  });

  app.put('/webhooks/:id', {
    config: auth,
    schema: {
      summary: 'Change a webhook endpoint’s URL and events',
      tags: ['webhooks'],
      params: WebhookParams,
      body: WebhookUpdate,
      response: { 200: Webhook },
      errors: APP_SCOPED,
    },
    handler: (request) => webhooks.update(principalOf(request), request.params.id, request.body),
  });

  app.delete('/webhooks/:id', {
    config: auth,
    schema: {
      summary: 'Delete a webhook endpoint',
      tags: ['webhooks'],
      params: WebhookParams,
      response: { 204: noContent('The endpoint is deleted; nothing more is sent to it') },
      errors: APP_SCOPED,
    },
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
      schema: {
        summary: enabled
          ? 'Resume deliveries to a webhook endpoint'
          : 'Pause deliveries to a webhook endpoint',
        tags: ['webhooks'],
        params: WebhookParams,
        response: { 200: Webhook },
        errors: APP_SCOPED,
      },
      handler: (request) => webhooks.setEnabled(principalOf(request), request.params.id, enabled),
    });
  }

  app.post('/webhooks/:id/rotate-secret', {
    config: auth,
    schema: {
      summary: 'Replace a webhook endpoint’s signing secret',
      tags: ['webhooks'],
      params: WebhookParams,
      response: { 200: RotatedSecret },
      errors: APP_SCOPED,
    },
    handler: (request) => webhooks.rotateSecret(principalOf(request), request.params.id),
  });

  app.post('/webhooks/:id/test', {
    config: auth,
    schema: {
      summary: 'Send a test event to a webhook endpoint',
      description: 'Sent now, with a sample payload; the answer says how the receiver answered.',
      tags: ['webhooks'],
      params: WebhookParams,
      response: { 200: SendOutcome },
      errors: APP_SCOPED,
    },
    handler: (request) => webhooks.sendTest(principalOf(request), request.params.id),
  });

  app.post('/webhooks/:id/deliveries/:deliveryId/redeliver', {
    config: auth,
    schema: {
      summary: 'Send a past delivery again',
      tags: ['webhooks'],
      params: DeliveryParams,
      response: { 200: SendOutcome },
      errors: APP_SCOPED,
    },
    handler: (request) =>
      webhooks.redeliver(principalOf(request), request.params.id, request.params.deliveryId),
  });

  app.get('/webhooks/:id/logs', {
    config: auth,
    schema: {
      summary: 'Delivery attempts of a webhook endpoint',
      description: 'Each attempt with the receiver’s HTTP status, response body and a success flag.',
      tags: ['webhooks'],
      params: WebhookParams,
      querystring: PageNumberQuery,
      response: { 200: AttemptLogList },
      errors: APP_SCOPED,
    },
    handler: (request) => webhooks.logs(principalOf(request), request.params.id, request.query),
  });

  app.get('/products/:id/merchant-webhook/logs', {
    config: auth,
    schema: {
      summary: 'Merchant webhook attempts of a product',
      description:
        'Each attempt to deliver a checkout merchant event (payment.succeeded, subscription.canceled, …) to the product’s merchantWebhookUrl, with the receiver’s HTTP status, response body and a success flag. Empty until the product’s first merchant event.',
      tags: ['webhooks'],
      params: WebhookParams,
      querystring: PageNumberQuery,
      response: { 200: AttemptLogList },
      errors: APP_SCOPED,
    },
    handler: (request) => webhooks.merchantLogs(principalOf(request), request.params.id, request.query),
  });

  app.post('/products/:id/merchant-webhook/deliveries/:deliveryId/redeliver', {
    config: auth,
    schema: {
      summary: 'Send a merchant webhook delivery again',
      description:
        'Sends it now to the product’s current merchantWebhookUrl, signed (x-svc-pay-signature) with its current callback secret, with the same event id; the attempt joins the log.',
      tags: ['webhooks'],
      params: DeliveryParams,
      response: { 200: SendOutcome },
      errors: { ...APP_SCOPED, conflict: 'the product has no merchantWebhookUrl now' },
    },
    handler: (request) =>
      webhooks.redeliverMerchant(principalOf(request), request.params.id, request.params.deliveryId),
  });
}
