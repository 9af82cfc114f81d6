import formBody from '@fastify/formbody';
import type { FastifyReply } from 'fastify';
import type { HttpApp } from '../../platform/http/create-http-app.js';
import { perMinute } from '../../platform/http/rate-limit.js';
import type { PaymentService } from '../payments/index.js';
import { CHECKOUT_CSS, CHECKOUT_JS } from './assets.js';
import {
  CardPaymentBody,
  CardPaymentStarted,
  CheckoutFormBody,
  CompleteQuery,
  CryptoEventAck,
  PageParams,
  PageQuery,
  ValidateAnswer,
  ValidateBody,
} from './schemas.js';
import type { CheckoutService, PageOutcome } from './service.js';

/**
 * Pages allow only our own files, plus Stripe's script and frames for Elements. No page may be
 * framed by another site (clickjacking on a card form).
 */
const PAGE_POLICY = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "script-src 'self' https://js.stripe.com",
  'frame-src https://js.stripe.com https://hooks.stripe.com',
  "connect-src 'self' https://api.stripe.com",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

function sendPage(reply: FastifyReply, outcome: PageOutcome) {
  reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
  if ('redirect' in outcome) return reply.redirect(outcome.redirect, 303);
  return reply
    .status(outcome.status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', PAGE_POLICY)
    .header('x-content-type-options', 'nosniff')
    .send(outcome.page.text);
}

/** The checkout host's pages and /api/checkout routes. Buyers and sellers' backends call them. */
export function registerCheckoutRoutes(
  app: HttpApp,
  checkout: CheckoutService,
  payments: Pick<PaymentService, 'receiveCryptoEvent'>,
  limits: { checkoutRateLimit: number; validateRateLimit: number },
): void {
  const rateLimit = perMinute(limits.checkoutRateLimit);

  const assets = [
    ['checkout.css', 'text/css; charset=utf-8', CHECKOUT_CSS],
    ['checkout.js', 'text/javascript; charset=utf-8', CHECKOUT_JS],
  ] as const;
  for (const [name, type, body] of assets) {
    app.get(`/checkout/assets/${name}`, {
      config: { auth: 'public' },
      handler: (_request, reply) =>
        reply.header('content-type', type).header('cache-control', 'public, max-age=3600').send(body),
    });
  }

  app.get('/checkout/:productId', {
    config: { auth: 'public' },
    schema: { tags: ['checkout'], params: PageParams, querystring: PageQuery },
    handler: async (request, reply) =>
      sendPage(reply, await checkout.page(request.params.productId, request.query.payload)),
  });

  app.get('/checkout/:productId/complete', {
    config: { auth: 'public' },
    schema: { tags: ['checkout'], params: PageParams, querystring: CompleteQuery },
    handler: async (request, reply) =>
      sendPage(reply, await checkout.complete(request.params.productId, request.query)),
  });

  app.get('/checkout/:productId/continue', {
    config: { auth: 'public' },
    schema: { tags: ['checkout'], params: PageParams, querystring: CompleteQuery },
    handler: async (request, reply) =>
      sendPage(reply, await checkout.complete(request.params.productId, request.query, { continue: true })),
  });

  app.register(async (scope) => {
    await scope.register(formBody, { bodyLimit: 16_384 });
    const form = scope as unknown as HttpApp;
    form.post('/checkout/:productId', {
      config: { auth: 'public', rateLimit },
      schema: { tags: ['checkout'], params: PageParams, body: CheckoutFormBody },
      handler: async (request, reply) =>
        sendPage(reply, await checkout.pay(request.params.productId, request.body)),
    });
  });

  app.post('/api/checkout/payment-intent', {
    config: { auth: 'public', rateLimit },
    schema: { tags: ['checkout'], body: CardPaymentBody, response: { 201: CardPaymentStarted } },
    handler: async (request, reply) => reply.status(201).send(await checkout.startCardPayment(request.body)),
  });

  app.post('/api/checkout/mirror/validate', {
    config: { auth: 'public', rateLimit: perMinute(limits.validateRateLimit) },
    schema: { tags: ['checkout'], body: ValidateBody, response: { 200: ValidateAnswer } },
    handler: (request) => checkout.validate(request.body),
  });

  // The partner signs the exact bytes it sent: this route alone reads the body as raw text.
  app.register(async (raw) => {
    raw.removeContentTypeParser('application/json');
    raw.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) =>
      done(null, body),
    );
    raw.post('/api/checkout/crypto/webhook', {
      config: { auth: 'public' },
      schema: { tags: ['checkout'], response: { 200: CryptoEventAck } },
      handler: (request) =>
        payments.receiveCryptoEvent(
          String(request.body ?? ''),
          request.headers['x-cc-webhook-signature'] as string | undefined,
        ),
    });
  });
}
