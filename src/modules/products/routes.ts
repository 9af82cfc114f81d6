import type { HttpApp } from '../../platform/http/create-http-app.js';
import { idempotentAnswer } from '../../platform/http/idempotency.js';
import { principalOf } from '../../platform/http/principal.js';
import { APP_SCOPED, noContent, type RouteErrors } from '../../platform/http/responses.js';
import { pageOf } from '../../platform/http/schemas.js';
import {
  Product,
  ProductCreate,
  ProductList,
  ProductListQuery,
  ProductParams,
  ProductPatch,
  ProductReplace,
} from './schemas.js';
import type { ProductService } from './service.js';

const changing: RouteErrors = {
  ...APP_SCOPED,
  tier_required: 'a field set needs a higher plan tier',
};

export function registerProductRoutes(app: HttpApp, products: ProductService): void {
  app.get('/products', {
    config: { auth: 'seller' },
    schema: {
      summary: 'List your products',
      description: 'With an API key, only the products of the key’s app.',
      tags: ['products'],
      querystring: ProductListQuery,
      response: { 200: ProductList },
    },
    handler: (request) => {
      const { limit, offset, ...filter } = request.query;
      return products.list(principalOf(request), filter, pageOf({ limit, offset }));
    },
  });

  app.post('/products', {
    config: { auth: 'seller', idempotent: true, location: (product) => `/products/${product.id}` },
    schema: {
      summary: 'Create a product',
      tags: ['products'],
      body: ProductCreate,
      response: { 201: Product },
      errors: { ...changing, not_found: 'the app named by appId does not exist or is another seller’s' },
    },
    handler: async (request, reply) =>
      reply
        .status(201)
        .send(await products.create(principalOf(request), request.body, idempotentAnswer(request))),
  });

  app.get('/products/:id', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Get a product',
      tags: ['products'],
      params: ProductParams,
      response: { 200: Product },
      errors: APP_SCOPED,
    },
    handler: (request) => products.get(principalOf(request), request.params.id),
  });

  app.put('/products/:id', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Replace a product',
      description: 'The product becomes what the body says; omitted fields return to their defaults.',
      tags: ['products'],
      params: ProductParams,
      body: ProductReplace,
      response: { 200: Product },
      errors: {
        ...changing,
        product_in_use: 'moving the product to another app while licenses reference it',
      },
    },
    handler: (request) => products.replace(principalOf(request), request.params.id, request.body),
  });

  app.patch('/products/:id', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Change some fields of a product',
      tags: ['products'],
      params: ProductParams,
      body: ProductPatch,
      response: { 200: Product },
      errors: {
        ...changing,
        product_in_use: 'moving the product to another app while licenses reference it',
      },
    },
    handler: (request) => products.update(principalOf(request), request.params.id, request.body),
  });

  app.post('/products/:id/rotate-callback-secret', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Replace a product’s callback secret',
      description: 'The old secret stops working at once; the answer carries the new one.',
      tags: ['products'],
      params: ProductParams,
      response: { 200: Product },
      errors: APP_SCOPED,
    },
    handler: (request) => products.rotateCallbackSecret(principalOf(request), request.params.id),
  });

  app.delete('/products/:id', {
    config: { auth: 'seller' },
    schema: {
      summary: 'Delete a product',
      tags: ['products'],
      params: ProductParams,
      response: { 204: noContent('The product is deleted') },
      errors: { ...APP_SCOPED, product_in_use: 'licenses or subscriptions still reference the product' },
    },
    handler: async (request, reply) => {
      await products.remove(principalOf(request), request.params.id);
      return reply.status(204).send();
    },
  });
}
