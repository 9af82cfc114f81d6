import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import underPressure from '@fastify/under-pressure';
import Fastify, {
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  LogController,
} from 'fastify';
import { AppError } from '../errors.js';
import type { Log } from '../log.js';
import type { RequestRecorder } from '../metrics.js';
import { AllowedMethods } from './allowed-methods.js';
import { requestIdOf } from './conventions.js';
import { registerCreatedLocations } from './created-location.js';
import { DeferredCompilation } from './deferred-compilation.js';
import { answerOverloaded, EarlyShedding } from './early-shedding.js';
import {
  answerClientError,
  answerFailure,
  answerFrameworkError,
  answerOutsideRoutes,
  answerUnrouted,
} from './error-answers.js';
import type { HttpApp } from './http-app.js';
import { type Authenticate, type AuthRequirement, bearerTokenOf } from './principal.js';
import { requestLog } from './request-log.js';
import { checkResponseContract, type ResponseContractMode } from './response-contract.js';
import { completeResponses } from './responses.js';
import { NoQuery } from './schemas.js';
import { findUnstorableValue, validatorCompiler } from './validation.js';

/** The app type every module registers its routes on (TypeBox-typed requests). */
export type { HttpApp } from './http-app.js';

export interface RouteInfo {
  method: string;
  url: string;
  auth: AuthRequirement;
  /** The statuses it may answer, as completed from its schema (`200`, `201`, `401`, `5xx`…). */
  statuses: string[];
  /** Whether it counts requests against a limit (`config.rateLimit`). */
  rateLimited: boolean;
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
    frameworkErrors: answerFrameworkError,
    clientErrorHandler: answerClientError,
    serverFactory: (handler, serverOptions) => createServer(handler, serverOptions, shedding),
    schemaController: { compilersFactory: { buildSerializer: compilation.serializers() } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  const catalog: RouteInfo[] = [];
  routeCatalogs.set(app, catalog);
  const allowed = new AllowedMethods();
  app.addHook('onRoute', (route) => {
    const auth = route.config?.auth ?? 'seller';
    const response = completeResponses(route, auth);
    route.schema = {
      ...route.schema,
      // A route that declares no query parameters refuses any, as it refuses unknown body fields.
      querystring: route.schema?.querystring ?? NoQuery,
      response,
    };
    const methods = [route.method].flat();
    allowed.add(route.url, methods);
    for (const method of methods) {
      if (method === 'HEAD') continue;
      catalog.push({
        method,
        url: route.url,
        auth,
        statuses: Object.keys(response),
        rateLimited: route.config?.rateLimit !== undefined,
      });
    }
  });
  // After the hook above: a route's 201 is in its completed schema by then.
  registerCreatedLocations(app as unknown as HttpApp);

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

  app.setNotFoundHandler(answerUnrouted(allowed));
  app.setErrorHandler(answerFailure);

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
  const token = bearerTokenOf(request.headers.authorization);
  if (token === null)
    throw new AppError('unauthorized', 'Send Authorization: Bearer <user token or API key>');
  const principal = authenticate ? await authenticate(token) : null;
  if (!principal) throw new AppError('unauthorized', 'The bearer token is invalid, expired or revoked');
  if (requirement === 'user' && principal.credential.kind !== 'user_token') {
    throw new AppError('user_token_required', 'This route needs a signed-in user token, not an API key');
  }
  if (requirement === 'admin' && principal.role !== 'ADMIN') {
    throw new AppError('forbidden', 'This route needs the ADMIN role');
  }
  return principal;
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
