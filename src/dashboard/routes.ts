import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpApp } from '../platform/http/create-http-app.js';
import { noContent } from '../platform/http/responses.js';
import { textResponse } from '../platform/http/schemas.js';
import { type Asset, type DashboardBundle, dashboardBundle } from './bundle.js';
import { DASHBOARD_POLICY, DASHBOARD_SHELL } from './shell.js';

const SECURITY_HEADERS = {
  'content-security-policy': DASHBOARD_POLICY,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
};

/**
 * Assets are revalidated on every load (no-cache with an ETag): the bundle changes with each
 * deploy and its URL does not, so a cached copy must never outlive the server that built it.
 */
function assetBody(request: FastifyRequest, reply: FastifyReply, asset: Asset, type: string) {
  reply.headers({ ...SECURITY_HEADERS, 'cache-control': 'no-cache', etag: asset.etag });
  if (request.headers['if-none-match'] === asset.etag) {
    reply.status(304);
    return undefined;
  }
  reply.header('content-type', type);
  return asset.body;
}

/** The seller dashboard at the core host's root: one page and its two assets, all public. */
export function registerDashboardRoutes(app: HttpApp): void {
  app.get('/dashboard', {
    config: { auth: 'public' },
    schema: {
      tags: ['dashboard'],
      summary: 'The seller dashboard (a single page that calls the /v1 API)',
      response: { 200: textResponse('text/html', 'The dashboard page') },
    },
    handler: (_request, reply) => {
      reply.headers({ ...SECURITY_HEADERS, 'cache-control': 'no-cache' });
      reply.header('content-type', 'text/html; charset=utf-8');
      return DASHBOARD_SHELL;
    },
  });

  const assets: [string, keyof DashboardBundle, string][] = [
    ['app.js', 'js', 'text/javascript; charset=utf-8'],
    ['app.css', 'css', 'text/css; charset=utf-8'],
  ];
  for (const [name, part, type] of assets) {
    app.get(`/dashboard/assets/${name}`, {
      config: { auth: 'public' },
      schema: {
        tags: ['dashboard'],
        summary: `The dashboard's ${part === 'js' ? 'script' : 'stylesheet'}`,
        response: {
          200: textResponse(type.split(';')[0] ?? type, `The dashboard's bundled ${name}`),
          304: noContent('Not modified: the copy named by If-None-Match is current'),
        },
      },
      handler: async (request, reply) => assetBody(request, reply, (await dashboardBundle())[part], type),
    });
  }
}
