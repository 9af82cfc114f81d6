import { randomUUID } from 'node:crypto';
import http, { type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import underPressure from '@fastify/under-pressure';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import { isDatabaseUnavailable } from '../db/errors.js';
import { AppError, ERROR_STATUS, type ErrorCode, type ErrorDetail } from '../errors.js';
import type { Log } from '../log.js';
import type { RequestRecorder } from '../metrics.js';
import { RETRY_AFTER_SECONDS, requestIdOf } from './conventions.js';
import { DeferredCompilation } from './deferred-compilation.js';
import { answerOverloaded, EarlyShedding } from './early-shedding.js';
import type { HttpApp } from './http-app.js';
import type { Authenticate, AuthRequirement } from './principal.js';
import { requestLog } from './request-log.js';
import { checkResponseContract, type ResponseContractMode } from './response-contract.js';
import { completeResponses } from './responses.js';
import { NoQuery } from './schemas.js';
import { findUnstorableValue, validationDetails, validatorCompiler } from './validation.js';

/** The app type every module registers its routes on (TypeBox-typed requests). */
export type { HttpApp } from './http-app.js';

export interface RouteInfo {
  method: string;
  url: string;
  auth: AuthRequirement;
}

const routeCatalogs = new WeakMap<object, RouteInfo[]>();
const inFlightRequests = new WeakMap<object, InFlight>();

/**
 * Requests whose handlers have not finished. A socket closing is not enough: a client may hang
 * up while its handler still runs, so shutdown waits for this count before closing storage.
 */
class InFlight {
  private readonly requests = new Set<FastifyRequest>();
  private waiters: (() => void)[] = [];

  add(request: FastifyRequest): void {
    this.requests.add(request);
  }

  get size(): number {
    return this.requests.size;
  }

  settle(request: FastifyRequest): void {
    if (!this.requests.delete(request) || this.requests.size > 0) return;
    for (const resolve of this.waiters.splice(0)) resolve();
  }

  drained(): Promise<void> {
    if (this.requests.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

const drainSwitches = new WeakMap<object, () => void>();

/**
 * The first step of stopping, while the listeners still accept: the probe routes answer 503
 * `not_ready`, so balancers take the node out of their pool, every other route is served as
 * before, and every answer closes its connection, so a client's next request opens a new one
 * wherever the balancer sends it. Closing the app drains it too.
 */
export function drain(app: object): void {
  drainSwitches.get(app)?.();
}

/** Resolves once every request the app has taken in has produced its response. */
export function requestsDrained(app: object): Promise<void> {
  return inFlightRequests.get(app)?.drained() ?? Promise.resolve();
}

/** Every route registered on an app with its auth requirement (read by the shared auth suite). */
export function registeredRoutes(app: object): RouteInfo[] {
  return routeCatalogs.get(app) ?? [];
}

export interface HttpAppOptions {
  log: Log;
  /** Resolves a bearer token; absent on a host whose routes are all public. */
  authenticate?: Authenticate;
  bodyLimit?: number;
  /** Client address: how many proxy hops to trust (0: the socket's peer). */
  trustProxyHops?: number;
  /** Check responses against their declared schemas (see response-contract.ts); off by default. */
  responseContract?: ResponseContractMode;
  /** When to shed new requests with 503 `overloaded` (see registerLoadShedding). */
  overload?: { maxInFlight: number; maxEventLoopDelayMs: number };
  /** The completion line per request (ACCESS_LOG): every request (default), failures only, none. */
  accessLog?: 'on' | 'errors' | 'off';
  /** Records each finished request in the HTTP metrics (metrics.ts); absent: not recorded. */
  metrics?: RequestRecorder;
}

export const DEFAULT_BODY_LIMIT = 256 * 1024;

/**
 * The Fastify instance both hosts are built on: JSON only, one error body, request ids on
 * every response, strict validation and the route-level auth requirement.
 */
export function createHttpApp(options: HttpAppOptions): HttpApp {
  const shedding = new EarlyShedding(options.log);
  const compilation = new DeferredCompilation(options.log);
  const app = Fastify({
    loggerInstance: options.log,
    bodyLimit: options.bodyLimit ?? DEFAULT_BODY_LIMIT,
    requestIdHeader: false,
    genReqId: (req) => requestIdOf(req.headers['x-request-id']),
    childLoggerFactory: (logger, bindings, options) => requestLog(logger as Log, bindings, options),
    // One completion line per request is logged by the onResponse hook below instead.
    logController: new LogController({ requestIdLogLabel: 'requestId', disableRequestLogging: true }),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    trustProxy: (_address: string, hop: number) => hop < (options.trustProxyHops ?? 0),
    // Requests that arrive while closing get our own 503 body (below) instead of Fastify's.
    return503OnClosing: false,
    // Errors Fastify raises before routing still answer in the one error body.
    frameworkErrors: (error, request, reply) => {
      if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
        sendError(request, reply, 'uri_too_long', 'A path segment is too long');
      else sendError(request, reply, 'bad_request', 'The request URL is malformed');
    },
    clientErrorHandler: answerClientError,
    serverFactory: (handler, serverOptions) => createServer(handler, serverOptions, shedding),
    schemaController: { compilersFactory: { buildSerializer: compilation.serializers() } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const catalog: RouteInfo[] = [];
  routeCatalogs.set(app, catalog);
  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth ?? 'seller';
    route.schema = {
      ...route.schema,
      // A route that declares no query parameters refuses any, as it refuses unknown body fields.
      querystring: route.schema?.querystring ?? NoQuery,
      response: completeResponses(route, auth),
    };
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      catalog.push({ method, url: route.url, auth });
    }
  });

  app.setValidatorCompiler(compilation.validators(validatorCompiler));
  app.addHook('onListen', async () => {
    void compilation.warmUp();
  });
  // Fastify also parses text/plain by default; this interface speaks JSON only.
  app.removeContentTypeParser('text/plain');
  app.decorateRequest('principal', null);

  let closing = false;
  let draining = false;
  drainSwitches.set(app, () => {
    draining = true;
  });
  app.addHook('preClose', async () => {
    closing = true;
    compilation.stop();
    draining = true;
  });

  if (options.overload?.maxEventLoopDelayMs)
    registerEventLoopShedding(
      app as unknown as FastifyInstance,
      options.overload.maxEventLoopDelayMs,
      shedding,
    );

  // Before the in-flight hook: a violation answers again, and that answer settles the request.
  checkResponseContract(app as unknown as HttpApp, options.responseContract ?? 'off');

  const inFlight = new InFlight();
  inFlightRequests.set(app, inFlight);
  const maxInFlight = options.overload?.maxInFlight;
  if (maxInFlight !== undefined) shedding.watch(() => inFlight.size > maxInFlight);
  // onSend runs once the handler is done, even for a client that has gone; onResponse covers
  // anything that ends without a payload.
  // The hooks every request runs are written with callbacks, not async functions: an async hook
  // costs a promise and a microtask turn per request even when it has nothing to wait for.
  app.addHook('onSend', (request, reply, payload, done) => {
    inFlight.settle(request);
    // Also the answers of requests taken in before the node began to stop: Node's server keeps
    // their connections open once closed, and a request sent on one would find the node closing.
    if (draining) reply.header('connection', 'close');
    done(null, payload);
  });

  app.addHook('onRequest', (request, reply, done) => {
    inFlight.add(request);
    reply.header('x-request-id', request.id);
    if (
      options.overload &&
      inFlight.size > options.overload.maxInFlight &&
      !request.routeOptions.config.alwaysAnswer
    ) {
      done(new AppError('overloaded', 'The service is over capacity; retry shortly'));
      return;
    }
    if ((request.log as Log).isLevelEnabled('debug'))
      request.log.debug({ method: request.method, path: pathOf(request) }, 'http.request.received');
    if (closing || (draining && request.routeOptions.config.probe)) {
      done(new AppError('not_ready', 'The service is shutting down; retry the request'));
      return;
    }
    const requirement = request.routeOptions.config.auth ?? 'seller';
    if (request.is404 || requirement === 'public') {
      done();
      return;
    }
    authorize(request, requirement, options.authenticate).then((principal) => {
      request.principal = principal;
      done();
    }, done);
  });

  app.addHook('preValidation', (request, _reply, done) => {
    done(
      unstorable('body', request.body) ??
        unstorable('query', request.query) ??
        unstorable('params', request.params),
    );
  });

  const accessLog = options.accessLog ?? 'on';
  const recordRequest = options.metrics;
  app.addHook('onResponse', (request, reply, done) => {
    inFlight.settle(request);
    recordRequest?.(request, reply.statusCode, reply.elapsedTime);
    logCompletion(request, reply, accessLog);
    done();
  });

  app.setNotFoundHandler((request, reply) => {
    sendError(request, reply, 'route_not_found', `No route ${request.method} ${request.url.split('?')[0]}`);
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof AppError) {
      sendError(request, reply, error.code, error.message, error.details);
      return;
    }
    if (error.validation) {
      const details = validationDetails(error.validation as never, error.validationContext);
      const first = details[0];
      const message = first ? `${first.field}: ${first.message}` : 'Request is invalid';
      sendError(request, reply, 'validation_failed', message, details);
      return;
    }
    const mapped = mapFrameworkError(error);
    if (mapped) {
      sendError(request, reply, mapped.code, mapped.message);
      return;
    }
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: { message: error.message } }, 'http.request.database_unavailable');
      sendError(
        request,
        reply,
        'database_unavailable',
        'The database is unreachable right now; retry shortly',
      );
      return;
    }
    request.log.error({ err: error }, 'http.request.failed');
    sendError(
      request,
      reply,
      'internal_error',
      'Something went wrong on our side; quote the requestId if you report it',
    );
  });

  return app as unknown as HttpApp;
}

/**
 * Beyond its capacity a node answers new requests at once with 503 `overloaded` rather than
 * queueing them until every client times out. Two signals: requests in hand (counted by the
 * in-flight hook) and the event loop's mean delay, watched by @fastify/under-pressure. Routes
 * marked `alwaysAnswer` (health) are served regardless, so probes see a busy node as alive.
 */
function registerEventLoopShedding(
  app: FastifyInstance,
  maxEventLoopDelay: number,
  shedding: EarlyShedding,
): void {
  const sampleInterval = 500;
  // The first samples measure start-up (compiling every route's schemas), not load.
  let judgeFrom = Number.POSITIVE_INFINITY;
  app.addHook('onReady', async () => {
    judgeFrom = Date.now() + 2 * sampleInterval;
    const pressured = app as FastifyInstance & { isUnderPressure(): boolean };
    shedding.watch(() => Date.now() >= judgeFrom && pressured.isUnderPressure());
  });
  app.register(underPressure, {
    maxEventLoopDelay,
    sampleInterval,
    pressureHandler: (request) =>
      request.routeOptions.config.alwaysAnswer || Date.now() < judgeFrom
        ? undefined
        : Promise.reject(new AppError('overloaded', 'The service is over capacity; retry shortly')),
  });
}

/** The completion line of a request, at the level its outcome and route call for. */
function logCompletion(
  request: FastifyRequest,
  reply: FastifyReply,
  accessLog: 'on' | 'errors' | 'off',
): void {
  if (accessLog === 'off') return;
  const failed = reply.statusCode >= 400;
  if (accessLog === 'errors' && !failed) return;
  // A disabled level costs one comparison here, before any log object is built.
  const level = failed || request.routeOptions.config.accessLog !== 'quiet' ? 'info' : 'debug';
  if (!(request.log as Log).isLevelEnabled(level)) return;
  request.log[level](
    {
      method: request.method,
      path: pathOf(request),
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime),
    },
    'http.request.completed',
  );
}

/** A value PostgreSQL cannot store (a NUL character, say) anywhere in one part of the request. */
function unstorable(part: 'body' | 'query' | 'params', value: unknown): AppError | undefined {
  const problem = findUnstorableValue(value);
  if (problem === null) return undefined;
  const field = problem.field || part;
  return new AppError('validation_failed', `${field}: ${problem.message}`, [
    { field, message: problem.message },
  ]);
}

const pathOf = (request: FastifyRequest) =>
  request.routeOptions.config?.secretInPath ? request.routeOptions.url : request.url.split('?')[0];

async function authorize(request: FastifyRequest, requirement: AuthRequirement, authenticate?: Authenticate) {
  if (requirement === 'public') return null;
  const header = request.headers.authorization;
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  if (!match?.[1]) throw new AppError('unauthorized', 'Send Authorization: Bearer <user token or API key>');
  const principal = authenticate ? await authenticate(match[1]) : null;
  if (!principal) throw new AppError('unauthorized', 'The bearer token is invalid, expired or revoked');
  if (requirement === 'user' && principal.credential.kind !== 'user_token') {
    throw new AppError('user_token_required', 'This route needs a signed-in user token, not an API key');
  }
  if (requirement === 'admin' && principal.role !== 'ADMIN') {
    throw new AppError('forbidden', 'This route needs the ADMIN role');
  }
  return principal;
}

function mapFrameworkError(error: FastifyError): { code: ErrorCode; message: string } | null {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return { code: 'unsupported_media_type', message: 'Send the body as application/json' };
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return { code: 'payload_too_large', message: 'The request body is too large' };
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return { code: 'invalid_json', message: 'The body is empty but Content-Type says JSON' };
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return { code: 'invalid_json', message: 'The body is not valid JSON' };
  }
  if (error.statusCode === 400 && error instanceof SyntaxError) {
    return { code: 'invalid_json', message: 'The body is not valid JSON' };
  }
  if (error.statusCode === 413)
    return { code: 'payload_too_large', message: 'The request body is too large' };
  if (error.statusCode === 415)
    return { code: 'unsupported_media_type', message: 'Send the body as application/json' };
  if (error.statusCode === 429) return { code: 'rate_limited', message: error.message };
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return { code: 'validation_failed', message: error.message };
  }
  return null;
}

export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ErrorCode,
  message: string,
  details?: ErrorDetail[],
): void {
  // A 503 is temporary by definition (an outage, a node stopping): say when to come back.
  if (ERROR_STATUS[code] === 503) reply.header('retry-after', RETRY_AFTER_SECONDS);
  void reply
    .status(ERROR_STATUS[code])
    .header('x-request-id', request.id)
    .type('application/json; charset=utf-8')
    .send({ error: { code, message, ...(details?.length ? { details } : {}), requestId: request.id } });
}

/**
 * Node's own server, except that an HTTP/1.1 request without a Host header (which Node would
 * refuse with an empty body) is refused here in the error body, before it reaches any route.
 */
function createServer(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  options: FastifyServerOptions,
  shedding: EarlyShedding,
) {
  const server = http.createServer({ requireHostHeader: false }, (req, res) => {
    if (req.httpVersion === '1.1' && req.headers.host === undefined) {
      answerOutsideRoutes(res, 'bad_request', 'An HTTP/1.1 request must send a Host header');
      return;
    }
    if (shedding.sheds(req)) {
      answerOverloaded(req, res);
      return;
    }
    handler(req, res);
  });
  // What Fastify sets on the server it would have made itself.
  server.keepAliveTimeout = options.keepAliveTimeout ?? server.keepAliveTimeout;
  server.requestTimeout = options.requestTimeout ?? server.requestTimeout;
  server.setTimeout(options.connectionTimeout ?? 0);
  if (options.maxRequestsPerSocket) server.maxRequestsPerSocket = options.maxRequestsPerSocket;
  return server;
}

/** The one error body for a request Fastify never sees. */
function answerOutsideRoutes(res: ServerResponse, code: ErrorCode, message: string): void {
  const requestId = randomUUID();
  const body = JSON.stringify({ error: { code, message, requestId } });
  res.writeHead(ERROR_STATUS[code], {
    connection: 'close',
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'x-request-id': requestId,
  });
  res.end(body);
}

/**
 * Malformed HTTP never becomes a request, so it is answered on the socket directly, still in
 * the one error body with a request id.
 */
function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, code, message]: [number, ErrorCode, string] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? [408, 'request_timeout', 'The request took too long to arrive']
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? [431, 'headers_too_large', 'The request headers are too large']
        : [400, 'bad_request', 'The request is not valid HTTP'];
  const requestId = randomUUID();
  const body = JSON.stringify({ error: { code, message, requestId } });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nx-request-id: ${requestId}\r\n\r\n${body}`,
  );
}
