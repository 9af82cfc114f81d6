import type { HttpApp } from '../../platform/http/create-http-app.js';
import { principalOf } from '../../platform/http/principal.js';
import { perMinute } from '../../platform/http/rate-limit.js';
import { pageOf } from '../../platform/http/schemas.js';
import {
  ConfirmPaymentBody,
  CreatePaymentIntentBody,
  DisputeDetail,
  DisputeList,
  DisputeListQuery,
  DisputeParams,
  OrderDetail,
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
import type { PaymentService } from './service.js';

/** Buyers' routes (the card partner's, named as the interface names them) and sellers' reads. */
export function registerPaymentRoutes(
  app: HttpApp,
  payments: PaymentService,
  limits: { checkoutRateLimit: number },
): void {
  const rateLimit = perMinute(limits.checkoutRateLimit);

  app.post('/stripe/create-payment-intent', {
    config: { auth: 'public', rateLimit },
    schema: { tags: ['payments'], body: CreatePaymentIntentBody, response: { 201: PaymentIntentCreated } },
    handler: async (request, reply) =>
      reply.status(201).send(await payments.createPaymentIntent(request.body)),
  });

  app.post('/stripe/confirm-payment', {
    config: { auth: 'public', rateLimit },
    schema: { tags: ['payments'], body: ConfirmPaymentBody, response: { 200: PaymentConfirmation } },
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
      schema: { tags: ['payments'], response: { 200: PartnerEventAck } },
      handler: (request) =>
        payments.receivePartnerEvent(
          String(request.body ?? ''),
          request.headers['stripe-signature'] as string | undefined,
        ),
    });
  });

  app.post('/transaction/status', {
    config: { auth: 'seller' },
    schema: { tags: ['transactions'], body: TransactionStatusBody, response: { 200: TransactionStatus } },
    handler: (request) => payments.transactionStatus(principalOf(request), request.body.transaction),
  });

  app.post('/transactions', {
    config: { auth: 'seller' },
    schema: { tags: ['transactions'], body: TransactionsBody, response: { 200: TransactionBatch } },
    handler: (request) => payments.transactions(principalOf(request), request.body),
  });

  app.get('/orders', {
    config: { auth: 'seller' },
    schema: { tags: ['orders'], querystring: OrderListQuery, response: { 200: OrderList } },
    handler: (request) => {
      const { limit, offset, ...filter } = request.query;
      return payments.listOrders(principalOf(request), filter, pageOf({ limit, offset }));
    },
  });

  app.get('/disputes', {
    config: { auth: 'seller' },
    schema: { tags: ['disputes'], querystring: DisputeListQuery, response: { 200: DisputeList } },
    handler: (request) => {
      const { limit, offset, ...filter } = request.query;
      return payments.listDisputes(principalOf(request), filter, pageOf({ limit, offset }));
    },
  });

  app.get('/disputes/:id', {
    config: { auth: 'seller' },
    schema: { tags: ['disputes'], params: DisputeParams, response: { 200: DisputeDetail } },
    handler: (request) => payments.getDispute(principalOf(request), request.params.id),
  });

  app.get('/orders/:id', {
    config: { auth: 'seller' },
    schema: { tags: ['orders'], params: OrderParams, response: { 200: OrderDetail } },
    handler: (request) => payments.getOrder(principalOf(request), request.params.id),
  });
}
