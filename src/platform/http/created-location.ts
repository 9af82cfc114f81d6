import type { FastifyReply, FastifyRequest, onSendHookHandler, RouteOptions } from 'fastify';
import type { HttpApp } from './http-app.js';

/**
 * Every 201 says in `Location` where what it created can be read (RFC 9110 §15.3.2). A route that
 * declares a 201 declares `config.location`: the path of the new resource inside the module, as
 * its routes are written (`/apps/${app.id}`); the host's prefix (/v1) is added here, so a module
 * never knows where it is mounted. (A full URL the service made, a page's own, is kept as it is.)
 * A route that answers 201 without one fails at start-up.
 *
 * The header is worked out from the answer as sent, in onSend, so an idempotent replay (which
 * sends the kept body) carries the same Location as the first answer without storing it.
 */

/** The created answer as JSON gives it back, and the request's path values. */
export type CreatedAnswer = Readonly<Record<string, unknown>>;
export type PathValues = Readonly<Record<string, string>>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Where the resource a 201 created is read: its path under the route's prefix. Where it has
     * no route of its own, the nearest one that shows it (docs/api-conventions.md lists them).
     */
    location?: (answer: CreatedAnswer, params: PathValues) => string;
  }
}

const ABSOLUTE_URL = /^https?:\/\//;

export function registerCreatedLocations(app: HttpApp): void {
  app.addHook('onRoute', (route) => {
    const creates = '201' in ((route.schema?.response as object | undefined) ?? {});
    const location = route.config?.location;
    if (!creates && !location) return;
    const name = `${[route.method].flat().join(',')} ${route.url}`;
    if (!creates) throw new Error(`${name}: config.location is for routes that answer 201`);
    if (!location) throw new Error(`${name}: a route answering 201 declares config.location`);
    const hook = locationHook(route.prefix ?? '', location);
    route.onSend = [...[route.onSend ?? []].flat(), hook] as RouteOptions['onSend'];
  });
}

function locationHook(
  prefix: string,
  location: NonNullable<FastifyRequest['routeOptions']['config']['location']>,
) {
  const hook = (
    request: FastifyRequest,
    reply: FastifyReply,
    payload: unknown,
    done: (error: null, payload: unknown) => void,
  ) => {
    if (reply.statusCode === 201) {
      const answer = answerOf(payload);
      const where = answer && location(answer, request.params as PathValues);
      if (where) reply.header('location', ABSOLUTE_URL.test(where) ? where : `${prefix}${where}`);
    }
    done(null, payload);
  };
  return hook as onSendHookHandler;
}

/** The JSON object a 201 sends, read back from its serialized body. */
function answerOf(payload: unknown): CreatedAnswer | null {
  const text =
    typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
  if (text === null) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' ? (parsed as CreatedAnswer) : null;
  } catch {
    return null;
  }
}
