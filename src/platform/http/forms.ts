import formBody from '@fastify/formbody';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { HttpApp } from './create-http-app.js';

/**
 * Routes that take an HTML form post (the hosted checkout, the buyer portal), registered in a
 * scope of their own: the form body is parsed there only, and a form sent from another site is
 * refused (`refuse` answers it, with a 403) before its handler runs, so a forged post changes
 * nothing, a sign-in included (login CSRF). A browser says where a form came from with
 * Sec-Fetch-Site (every current browser) or, failing that, Origin. A post with neither is not a
 * browser's cross-site form (a server, curl) and goes on; the portal's form token still guards
 * every signed-in form.
 */
export function registerFormRoutes(
  app: HttpApp,
  refuse: (reply: FastifyReply) => FastifyReply,
  routes: (form: HttpApp) => void,
): void {
  app.register(async (scope) => {
    await scope.register(formBody, { bodyLimit: 16_384 });
    scope.addHook('onRequest', async (request, reply) => {
      if (fromAnotherSite(request)) return refuse(reply);
    });
    routes(scope as unknown as HttpApp);
  });
}

/** Whether the browser says the request came from a page of another site. */
export function fromAnotherSite(request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (typeof site === 'string') return site !== 'same-origin' && site !== 'none';
  // Pages sent with Referrer-Policy no-referrer post with `Origin: null`: no word either way.
  const origin = request.headers.origin;
  if (typeof origin !== 'string' || origin === 'null') return false;
  try {
    return new URL(origin).host !== request.host;
  } catch {
    return true;
  }
}
