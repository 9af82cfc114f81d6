import type { FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import type { HttpApp } from './http-app.js';
import { noContent } from './responses.js';

/**
 * Cross-origin access for the routes client software calls from a web page (license
 * verification, the key set, introspection): any origin may call them and read the answer,
 * never with credentials. A route opts in with `config: { cors: true }`; it then answers with
 * the CORS headers, failures included (a browser hides a 429 or 503 it may not read), and a
 * preflight route (OPTIONS on its path) is declared beside it like any other route. Every other
 * route sends no CORS header at all, so a page on another site cannot read a seller's data.
 *
 * Routes that do not opt in pay nothing: the hook below runs once per route at start-up, and a
 * route that opts in gets one header-setting hook, whatever the request carries.
 */

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Any origin may call this route from a browser and read its answers (no credentials). */
    cors?: boolean;
  }
}

/** How long a browser may reuse a preflight's answer (Chromium caps it at 2 hours). */
export const PREFLIGHT_MAX_AGE_SECONDS = 7200;
/** Request headers a page may send: a JSON body, and its own id to correlate with our logs. */
export const ALLOWED_REQUEST_HEADERS = 'Content-Type, X-Request-Id, Idempotency-Key';
/** Response headers a page may read beyond the safelisted ones: the request id and the limits. */
export const EXPOSED_HEADERS =
  'X-Request-Id, Retry-After, RateLimit, RateLimit-Policy, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset';

/**
 * Sent on every answer of an opted-in route, with or without an Origin header: the answer is the
 * same for every origin, so a cache (the key set is cacheable) needs no `Vary: Origin`.
 */
function addCorsHeaders(
  _request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: null, payload: unknown) => void,
): void {
  reply.header('access-control-allow-origin', '*');
  reply.header('access-control-expose-headers', EXPOSED_HEADERS);
  done(null, payload);
}

/**
 * Registers, before the host's routes, the hook that gives each opted-in route its CORS headers
 * and its preflight route. The preflight route is public, answers 204 whatever it is asked (the
 * browser compares), and is in the API reference and the shared suites like every route.
 */
export function registerCrossOriginRoutes(app: HttpApp): void {
  // Per path: the methods a browser may use there (a GET route brings its HEAD route too).
  const methodsByUrl = new Map<string, string[]>();
  app.addHook('onRoute', function declareCrossOrigin(route) {
    if (route.config?.cors !== true) return;
    const hooks = route.onSend === undefined ? [] : [route.onSend].flat();
    (route as RouteOptions).onSend = [...hooks, addCorsHeaders] as RouteOptions['onSend'];
    const known = methodsByUrl.get(route.url);
    const methods = known ?? [];
    for (const method of [route.method].flat()) if (!methods.includes(method)) methods.push(method);
    if (known) return;
    methodsByUrl.set(route.url, methods);
    // Declared on the instance the route is declared on, so it lands on the same path.
    this.options(route.routePath, {
      config: { auth: 'public', accessLog: 'quiet' },
      onSend: addCorsHeaders,
      schema: {
        summary: 'Cross-origin preflight',
        description: `What a browser asks before a cross-origin request with a JSON body: any origin may call this path, without credentials, sending \`${ALLOWED_REQUEST_HEADERS}\`; the answer may be reused for ${PREFLIGHT_MAX_AGE_SECONDS / 3600} hours.`,
        ...(route.schema?.tags ? { tags: route.schema.tags } : {}),
        response: { 204: noContent('Cross-origin requests are allowed; the headers say how') },
      },
      handler: async (_request, reply) =>
        reply
          .status(204)
          .header('access-control-allow-methods', methods.join(', '))
          .header('access-control-allow-headers', ALLOWED_REQUEST_HEADERS)
          .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS))
          .send(),
    });
  });
}
