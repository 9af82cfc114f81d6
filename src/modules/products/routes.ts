import type { HttpApp } from '../../platform/http/create-http-app.js';
import { principalOf } from '../../platform/http/principal.js';
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

export function registerProductRoutes(app: HttpApp, products: ProductService): void {
  app.get('/products', {
    config: { auth: 'seller' },
    schema: { tags: ['products'], querystring: ProductListQuery, response: { 200: ProductList } },
    handler: (request) => {
      const { limit, offset, ...filter } = request.query;
      return products.list(principalOf(request), filter, pageOf({ limit, offset }));
    },
  });

  app.post('/products', {
    config: { auth: 'seller' },
    schema: { tags: ['products'], body: ProductCreate, response: { 201: Product } },
    handler: async (request, reply) =>
      reply.status(201).send(await products.create(principalOf(request), request.body)),
  });

  app.get('/products/:id', {
    config: { auth: 'seller' },
    schema: { tags: ['products'], params: ProductParams, response: { 200: Product } },
    handler: (request) => products.get(principalOf(request), request.params.id),
  });

  app.put('/products/:id', {
    config: { auth: 'seller' },
    schema: { tags: ['products'], params: ProductParams, body: ProductReplace, response: { 200: Product } },
    handler: (request) => products.replace(principalOf(request), request.params.id, request.body),
  });

  app.patch('/products/:id', {
    config: { auth: 'seller' },
    schema: { tags: ['products'], params: ProductParams, body: ProductPatch, response: { 200: Product } },
    handler: (request) => products.update(principalOf(request), request.params.id, request.body),
  });

  app.post('/products/:id/rotate-callback-secret', {
    config: { auth: 'seller' },
    schema: { tags: ['products'], params: ProductParams, response: { 200: Product } },
    handler: (request) => products.rotateCallbackSecret(principalOf(request), request.params.id),
  });

  app.delete('/products/:id', {
    config: { auth: 'seller' },
    schema: { tags: ['products'], params: ProductParams },
    handler: async (request, reply) => {
      await products.remove(principalOf(request), request.params.id);
      return reply.status(204).send();
    },
  });
}
