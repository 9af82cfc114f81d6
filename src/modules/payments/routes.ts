import type { HttpApp } from '../../platform/http/create-http-app.js';
import { csvResponse, sendCsv } from '../../platform/http/csv.js';
import { idempotentAnswer } from '../../platform/http/idempotency.js';
import { principalOf } from '../../platform/http/principal.js';
import { perMinute } from '../../platform/http/rate-limit.js';
import { APP_SCOPED } from '../../platform/http/responses.js';
import { pageOf } from '../../platform/http/schemas.js';
import {
  ConfirmPaymentBody,
  CreatePaymentIntentBody,
  DisputeDetail,
  DisputeList,
  DisputeListQuery,
  DisputeParams,
  OrderDetail,
  OrderExportQuery,
  OrderList,
  OrderListQuery,
  OrderParams,
  PartnerEventAck,
  PaymentConfirmation,
  PaymentIntentCreated,
  TransactionBatch,
  TransactionStatus,
  TransactionStatusBody,
  TransactionsBody,
} from './schemas.js';
import { ORDER_CSV_HEADER } from './seller-reads.js';
import type { PaymentService } from './service.js';

/** Buyers' routes (the card partner's, named as the interface names them) and sellers' reads. */
export function registerPaymentRoutes(
  app: HttpApp,
  payments: PaymentService,
  limits: { checkoutRateLimit: number },
): void {
  const rateLimit = perMinute(limits.checkoutRateLimit);

  app.post('/stripe/create-payment-intent', {
    // The order it opened; the seller reads it there (the buyer's page has the client secret).
    config: {
      auth: 'public',
      rateLimit,
      idempotent: true,
      location: (intent) => `/orders/${intent.orderId}`,
    },
    schema: {
      summary: 'Start a card payment for a product',
      description:
        'Opens an order and a payment at the card partner; the client secret lets the buyer confirm it.',
      tags: ['payments'],
      body: CreatePaymentIntentBody,
      response: { 201: PaymentIntentCreated },
      errors: {
        not_found: 'no such product',
        product_unavailable: 'the product is not on sale, or cannot be bought by card yet',
      },
    },
    handler: async (request, reply) =>
      reply.status(201).send(await payments.createPaymentIntent(request.body, idempotentAnswer(request))),
  });

  app.post('/stripe/confirm-payment', {
    config: { auth: 'public', rateLimit },
    schema: {
      summary: 'Confirm a card payment and get the license',
      description:
        'Re-reads the payment at the partner (never the buyer’s word) and fulfils the order; a refused payment still answers 200 with its status.',
      tags: ['payments'],
      body: ConfirmPaymentBody,
      response: { 200: PaymentConfirmation },
      errors: { not_found: 'no payment matches this id and client secret' },
    },
    handler: (request) => payments.confirmPayment(request.body),
  });

  // The partner signs the exact bytes it sent: this route alone reads the body as raw text.
  app.register(async (raw) => {
    raw.removeContentTypeParser('application/json');
    raw.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) =>
      done(null, body),
    );
    raw.post('/stripe/webhook', {
      config: { auth: 'public' },
      schema: {
        summary: 'Receive the card partner’s events',
        description:
          'Called by Stripe, signed with the Stripe-Signature header over the raw body. An event already handled is acknowledged again.',
        tags: ['payments'],
        response: { 200: PartnerEventAck },
        errors: {
          bad_request: 'the signature does not match or is too old',
          not_found: 'no card partner webhook is configured',
        },
      },
      handler: (request) =>
        payments.receivePartnerEvent(
          String(request.body ?? ''),
          request.headers['stripe-signature'] as string | undefined,
        ),
    });
  });

  app.post('/transaction/status', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Look up a transaction’s status',
      description: 'A paid transaction follows its license: canceled while it is suspended or once revoked.',
      tags: ['transactions'],
      body: TransactionStatusBody,
      response: { 200: TransactionStatus },
      errors: { ...APP_SCOPED, not_found: 'no transaction of yours has this id' },
    },
    handler: (request) => payments.transactionStatus(principalOf(request), request.body.transaction),
  });

  app.post('/transactions', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Look up many transactions at once',
      description:
        'At most 200 rows, within a relative window (all, today, week, month); statuses read as in the single lookup.',
      tags: ['transactions'],
      body: TransactionsBody,
      response: { 200: TransactionBatch },
    },
    handler: (request) => payments.transactions(principalOf(request), request.body),
  });

  app.get('/orders', {
    config: { auth: 'seller' },
    schema: {
      summary: 'List your orders',
      description:
        'Paid and pending orders of your products unless status asks for another. A paid order whose license is suspended or revoked reads canceled. Newest first unless `sort` names another order; `email` matches any part of the address, ignoring case.',
      tags: ['orders'],
      querystring: OrderListQuery,
      response: { 200: OrderList },
    },
    handler: (request) => {
      const { limit, offset, ...filter } = request.query;
      return payments.listOrders(principalOf(request), filter, pageOf({ limit, offset }));
    },
  });

  app.get('/orders/export.csv', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Export your orders as CSV',
      description: `Every order the list with the same filters and sort would show, without paging, streamed as CSV (RFC 4180, UTF-8, a header row) for a spreadsheet. Columns: ${ORDER_CSV_HEADER.join(', ')}. A text cell starting with = + - @, a tab or a carriage return is prefixed with a single quote so a spreadsheet cannot run it as a formula.`,
      tags: ['orders'],
      querystring: OrderExportQuery,
      response: { 200: csvResponse('The orders as a CSV download (orders.csv)') },
    },
    handler: async (request, reply) =>
      sendCsv(
        reply,
        'orders.csv',
        ORDER_CSV_HEADER,
        payments.exportOrders(principalOf(request), request.query),
      ),
  });

  app.get('/disputes', {
    config: { auth: 'seller' },
    schema: {
      summary: 'List your disputes',
      tags: ['disputes'],
      querystring: DisputeListQuery,
      response: { 200: DisputeList },
    },
    handler: (request) => {
      const { limit, offset, ...filter } = request.query;
      return payments.listDisputes(principalOf(request), filter, pageOf({ limit, offset }));
    },
  });

  app.get('/disputes/:id', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Get a dispute',
      tags: ['disputes'],
      params: DisputeParams,
      response: { 200: DisputeDetail },
      errors: APP_SCOPED,
    },
    handler: (request) => payments.getDispute(principalOf(request), request.params.id),
  });

  app.get('/orders/:id', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Get an order',
      tags: ['orders'],
      params: OrderParams,
      response: { 200: OrderDetail },
      errors: APP_SCOPED,
    },
    handler: (request) => payments.getOrder(principalOf(request), request.params.id),
  });
}
