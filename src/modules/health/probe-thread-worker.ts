import http, { type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';
import { RETRY_AFTER_SECONDS, requestIdOf } from '../../platform/http/conventions.js';
import { ProbeState } from './probe-state.js';

/**
 * The probe listener's thread (started by probe-thread.ts): answers liveness and readiness on a
 * port of its own from what the main thread last wrote to shared memory, so a probe is read and
 * answered at once however busy the main thread's event loop is. node:http only, no database.
 */
export interface ProbeThreadData {
  host: string;
  port: number;
  backlog: number;
  /** Past this long without a beat, the main thread counts as stuck: both probes answer 503. */
  stallMs: number;
  state: SharedArrayBuffer;
}

/** What the thread tells the main thread: its port once listening, or a failure to log. */
export type ProbeThreadMessage =
  | { listening: number }
  | { failed: string; code?: string }
  | { error: string };

// The probe names of both hosts (routes.ts), so a probe moves here by changing its port only.
const LIVENESS = new Set(['/healthz', '/v1/health', '/health']);
const READINESS = new Set(['/readyz', '/v1/health/ready', '/health/ready']);
/** Probes send one small request; nothing legitimate keeps a connection waiting longer. */
const CONNECTION_TIMEOUT_MS = 5_000;

const data = workerData as ProbeThreadData;
const state = new ProbeState(data.state);
const tell = (message: ProbeThreadMessage) => parentPort?.postMessage(message);

type Answer = [status: number, body: object];

function answer(method: string, path: string, requestId: string): Answer {
  const live = LIVENESS.has(path);
  if ((!live && !READINESS.has(path)) || (method !== 'GET' && method !== 'HEAD')) {
    return failure(404, 'route_not_found', `No route ${method} ${path}`, requestId);
  }
  // The bodies and messages the main listeners answer with (routes.ts, create-http-app.ts).
  const readiness = state.readiness();
  if (readiness === 'stopping') {
    return failure(503, 'not_ready', 'The service is shutting down; retry the request', requestId);
  }
  const stalledMs = state.sinceBeatMs();
  if (stalledMs > data.stallMs) {
    const seconds = Math.floor(stalledMs / 1000);
    return failure(503, 'not_ready', `The service's main thread has not run for ${seconds} s`, requestId);
  }
  if (live) return [200, { status: 'ok' }];
  if (readiness === 'ready') return [200, { status: 'ready', database: 'ok' }];
  const why = readiness === 'starting' ? 'The service is starting' : 'The database is not reachable';
  return failure(503, 'not_ready', why, requestId);
}

function failure(status: number, code: string, message: string, requestId: string): Answer {
  return [status, { error: { code, message, requestId } }];
}

function send(res: ServerResponse, method: string, [status, body]: Answer, requestId: string): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    'x-request-id': requestId,
    ...(status === 503 ? { 'retry-after': RETRY_AFTER_SECONDS } : {}),
  });
  res.end(method === 'HEAD' ? undefined : text);
}

const server = http.createServer((req, res) => {
  const requestId = requestIdOf(req.headers['x-request-id']);
  // As the main listeners: a trailing slash is ignored; a probe's query string changes nothing.
  const path = (req.url ?? '/').split('?')[0]?.replace(/(.)\/$/, '$1') ?? '/';
  const method = req.method ?? 'GET';
  send(res, method, answer(method, path, requestId), requestId);
});
server.keepAliveTimeout = CONNECTION_TIMEOUT_MS;
server.headersTimeout = CONNECTION_TIMEOUT_MS;
server.requestTimeout = CONNECTION_TIMEOUT_MS;
// Malformed requests and hung-up clients end their connection, never the thread.
server.on('clientError', (_error, socket) => socket.destroy());
server.once('listening', () => {
  server.on('error', (error) => tell({ error: error.message }));
  tell({ listening: (server.address() as AddressInfo).port });
});
server.once('error', (error: NodeJS.ErrnoException) => {
  if (!server.listening) tell({ failed: error.message, code: error.code });
});
server.listen({ host: data.host, port: data.port, backlog: data.backlog });
