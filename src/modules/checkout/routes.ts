import type { FastifyReply } from 'fastify';
import Type from 'typebox';
import type { HttpApp } from '../../platform/http/create-http-app.js';
import { registerFormRoutes } from '../../platform/http/forms.js';
import { idempotentAnswer } from '../../platform/http/idempotency.js';
import { perMinute } from '../../platform/http/rate-limit.js';
import { errorBody, seeOther } from '../../platform/http/responses.js';
import { textResponse } from '../../platform/http/schemas.js';
import type { PaymentService } from '../payments/index.js';
import { CHECKOUT_CSS, CHECKOUT_JS } from './assets.js';
import { inlineStyleSources, type Page } from './html.js';
import { OVERLAY_FRAME_JS, OVERLAY_JS } from './overlay.js';
import { type PageOutcome, problemPage } from './pages.js';
import {
  CardPaymentBody,
  CardPaymentStarted,
  CheckoutFormBody,
  CompleteQuery,
  CryptoEventAck,
  PageParams,
  PageQuery,
  TrialFormBody,
  TrialStartBody,
  TrialStarted,
  ValidateAnswer,
  ValidateBody,
} from './schemas.js';
import type { CheckoutService } from './service.js';

/**
 * Pages allow only our own files (and the page's own style element, by hash: the seller's
 * colours), plus Stripe's script and frames for Elements. No page may be framed by another site
 * (clickjacking on a card form), except a seller's checkout pages by the exact origins that seller
 * listed for the overlay.
 */
export function pagePolicy(page: Page, frameAncestors: readonly string[] = []): string {
  return [
    "default-src 'none'",
    `style-src 'self'${inlineStyleSources(page)}`,
    "img-src 'self' data:",
    "script-src 'self' https://js.stripe.com",
    'frame-src https://js.stripe.com https://hooks.stripe.com',
    "connect-src 'self' https://api.stripe.com",
    "base-uri 'none'",
    `frame-ancestors ${frameAncestors.length > 0 ? frameAncestors.join(' ') : "'none'"}`,
  ].join('; ');
}

function sendPage(reply: FastifyReply, outcome: PageOutcome) {
  reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
  if ('redirect' in outcome) return reply.redirect(outcome.redirect, 303);
  return reply
    .status(outcome.status)
    .header('content-type', 'text/html; charset=utf-8')
    .header('content-security-policy', pagePolicy(outcome.page, outcome.frameAncestors))
    .header('x-content-type-options', 'nosniff')
    .send(outcome.page.text);
}

/** What every form post answers when the browser says it came from another site. */
const CROSS_SITE_FORM =
  'Sent from a page of another site (Sec-Fetch-Site or Origin): refused, nothing changed';
const page = (description: string) => textResponse('text/html', description);

/** A page route's 400: a problem page for a bad checkout link, the error body for a bad request. */
const pageOrErrorBody = (description: string, errors: Parameters<typeof errorBody>[0]) => ({
  description,
  content: { 'text/html': { schema: Type.String() }, 'application/json': { schema: errorBody(errors) } },
});

const receiptResponses = {
  200: page('The receipt with the license key, or a page that waits for a pending payment'),
  303: seeOther('On to the seller’s success address, signed (autoRedirect, or the buyer chose to continue)'),
  402: page('The payment did not go through; nothing was charged'),
  404: page('No payment matches this order and key'),
};

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
    ['overlay-frame.js', 'text/javascript; charset=utf-8', OVERLAY_FRAME_JS],
  ] as const;
  for (const [name, type, body] of assets) {
    app.get(`/checkout/assets/${name}`, {
      config: { auth: 'public' },
      schema: {
        summary: `The checkout pages’ ${name.endsWith('.css') ? 'stylesheet' : name === 'checkout.js' ? 'script' : 'script in the overlay'}`,
        tags: ['checkout'],
        response: { 200: textResponse(type.split(';')[0] as string, name) },
      },
      handler: async (_request, reply) => {
        reply.header('content-type', type).header('cache-control', 'public, max-age=3600');
        return body;
      },
    });
  }

  app.get('/overlay.js', {
    config: { auth: 'public' },
    schema: {
      summary: 'The overlay checkout script for sellers’ sites',
      description:
        'A seller’s site loads it with a script tag; it opens /checkout/:productId in a dialog over the page and tells the page when the purchase succeeds (docs/branding.md). Only the sites the seller listed in overlayOrigins may frame the checkout.',
      tags: ['checkout'],
      response: { 200: textResponse('text/javascript', 'overlay.js') },
    },
    handler: async (_request, reply) => {
      reply
        .header('content-type', 'text/javascript; charset=utf-8')
        .header('cache-control', 'public, max-age=3600')
        .header('x-content-type-options', 'nosniff')
        // Loaded by other sites' pages, which may require resources to say so.
        .header('cross-origin-resource-policy', 'cross-origin');
      return OVERLAY_JS;
    },
  });

  app.get('/checkout/:productId', {
    config: { auth: 'public' },
    schema: {
      summary: 'The checkout page of a product',
      description:
        'For buyers’ browsers: the product, the price and the payment form, and the free-trial form when the product offers a trial (hwuid, added by the buyer’s software, becomes the trial’s device). With payload (strict mirror mode) the e-mail is fixed by the seller.',
      tags: ['checkout'],
      params: PageParams,
      querystring: PageQuery,
      response: {
        200: page('The checkout form'),
        400: pageOrErrorBody(
          'The checkout link is not valid or has expired (a page), or a query value is invalid',
          {
            validation_failed: 'a query value is invalid',
          },
        ),
        404: page('The product does not exist or is not on sale'),
      },
    },
    handler: async (request, reply) =>
      sendPage(reply, await checkout.page(request.params.productId, request.query)),
  });

  app.get('/checkout/:productId/complete', {
    config: { auth: 'public' },
    schema: {
      summary: 'The buyer’s return after paying',
      description:
        'Where the partner sends the buyer back: the receipt and license key once the payment is through.',
      tags: ['checkout'],
      params: PageParams,
      querystring: CompleteQuery,
      response: receiptResponses,
    },
    handler: async (request, reply) =>
      sendPage(
        reply,
        await checkout.complete(request.params.productId, request.query, {
          framed: request.headers['sec-fetch-dest'] === 'iframe',
        }),
      ),
  });

  app.get('/checkout/:productId/continue', {
    config: { auth: 'public' },
    schema: {
      summary: 'Continue from the receipt to the seller’s site',
      description: 'Signs the success address when followed, so it arrives with a fresh timestamp.',
      tags: ['checkout'],
      params: PageParams,
      querystring: CompleteQuery,
      response: receiptResponses,
    },
    handler: async (request, reply) =>
      sendPage(reply, await checkout.complete(request.params.productId, request.query, { continue: true })),
  });

  const refuse = (reply: FastifyReply) =>
    sendPage(reply, {
      status: 403,
      page: problemPage(
        'Sent from another site',
        'This form can only be sent from the checkout page itself.',
      ),
    });
  registerFormRoutes(app, refuse, (form) => {
    form.post('/checkout/:productId', {
      config: { auth: 'public', rateLimit },
      schema: {
        summary: 'Pay from the checkout form',
        description:
          'The plain form post (application/x-www-form-urlencoded), working without JavaScript: the sandbox’s test card, or the crypto button.',
        tags: ['checkout'],
        params: PageParams,
        body: CheckoutFormBody,
        consumes: ['application/x-www-form-urlencoded'],
        response: {
          303: seeOther('Paid: on to the receipt; or on to the crypto partner’s payment page'),
          400: pageOrErrorBody(
            'The checkout link is not valid or has expired (a page), or the form is malformed',
            {
              validation_failed: 'a form field is invalid',
              invalid_json: 'a JSON body that does not parse',
            },
          ),
          402: page('The form again: the payment was declined'),
          403: page(CROSS_SITE_FORM),
          404: page('The product does not exist or is not on sale'),
          409: page('The form again: the product cannot be bought this way now'),
          422: page('The form again, saying what to correct'),
        },
      },
      handler: async (request, reply) =>
        sendPage(reply, await checkout.pay(request.params.productId, request.body)),
    });

    form.post('/checkout/:productId/trial', {
      config: { auth: 'public', rateLimit },
      schema: {
        summary: 'Start a free trial from the checkout page',
        description:
          'The trial form post (application/x-www-form-urlencoded): no payment; one trial per e-mail and per device. With the hwuid of the page (a trial on that device) it shows the key, bound to the device and also sent by e-mail; without, the key goes to the e-mail address only and the page says so.',
        tags: ['checkout'],
        params: PageParams,
        body: TrialFormBody,
        consumes: ['application/x-www-form-urlencoded'],
        response: {
          200: page(
            'The trial key bound to the device, or (a trial by e-mail) where the key was sent; with its end',
          ),
          400: pageOrErrorBody('The form is malformed', {
            validation_failed: 'a form field is invalid',
            invalid_json: 'a JSON body that does not parse',
          }),
          403: page(CROSS_SITE_FORM),
          404: page('The product does not exist, is not on sale, or offers no trial'),
          409: page(
            'The form again: this e-mail or device already had a trial, or the e-mail already holds a license',
          ),
          422: page('The form again, saying what to correct'),
        },
      },
      handler: async (request, reply) =>
        sendPage(reply, await checkout.startTrial(request.params.productId, request.body)),
    });
  });

  // Keyed: a client whose answer was lost retries with its key and gets its trial again, not
  // trial_already_used for the trial it started itself.
  app.post('/api/checkout/trials', {
    // The trial license has no route on this host; the buyer sees it in the portal.
    config: { auth: 'public', rateLimit, idempotent: true, location: () => '/portal' },
    schema: {
      summary: 'Start a free trial (for client software)',
      description:
        'Issues the product’s trial license without payment. With a hwuid it is a trial on that device, bound to it, and the answer carries the key; without, a trial by e-mail whose key goes to the address only (licenseKey is null). One trial per address and per device and product. The key is always mailed to the address. Paying later for the product with the same address issues a new license and ends this one. Send an Idempotency-Key (a random UUID) to retry safely: a retry whose first answer was lost gets that answer again.',
      tags: ['checkout'],
      body: TrialStartBody,
      response: { 201: TrialStarted },
      errors: {
        not_found: 'the product does not exist',
        product_unavailable: 'the product is not on sale, or offers no trial',
        trial_already_used: 'this e-mail address or device already had a trial of this product',
        license_already_owned: 'this e-mail address already holds a license of this product',
      },
    },
    handler: async (request, reply) =>
      reply.status(201).send(await checkout.startTrialFor(request.body, idempotentAnswer(request))),
  });

  app.post('/api/checkout/payment-intent', {
    // The page that shows how the payment ends: where the buyer returns to once it is confirmed.
    config: { auth: 'public', rateLimit, idempotent: true, location: (started) => String(started.returnUrl) },
    schema: {
      summary: 'Start a card payment from the checkout page (Stripe Elements)',
      tags: ['checkout'],
      body: CardPaymentBody,
      response: { 201: CardPaymentStarted },
      errors: {
        bad_request: 'the checkout link (payload) is not valid for this product, or has expired',
        product_unavailable: 'the product is not on sale, or cannot be bought by card yet',
      },
    },
    handler: async (request, reply) =>
      reply.status(201).send(await checkout.startCardPayment(request.body, idempotentAnswer(request))),
  });

  app.post('/api/checkout/mirror/validate', {
    config: { auth: 'public', rateLimit: perMinute(limits.validateRateLimit) },
    schema: {
      summary: 'Validate a purchase after the buyer’s redirect',
      description:
        'Called by the seller’s site with the license and e-mail from the redirect; grant access only when verified is true. An unknown pair still answers 200, with verified false; so does a purchase whose license is suspended, revoked or expired, with a code saying which.',
      tags: ['checkout'],
      body: ValidateBody,
      response: { 200: ValidateAnswer },
    },
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
      schema: {
        summary: 'Receive the crypto partner’s events',
        description: 'Signed by the partner over the raw body (X-CC-Webhook-Signature).',
        tags: ['checkout'],
        response: { 200: CryptoEventAck },
        errors: {
          bad_request: 'the signature does not match',
          not_found: 'no crypto partner is configured',
        },
      },
      handler: (request) =>
        payments.receiveCryptoEvent(
          String(request.body ?? ''),
          request.headers['x-cc-webhook-signature'] as string | undefined,
        ),
    });
  });
}
