import { randomUUID } from 'node:crypto';
import { type ServerResponse, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isDatabaseUnavailable } from '../db/errors.js';
import { AppError, ERROR_STATUS, type ErrorCode, type ErrorDetail } from '../errors.js';
import type { AllowedMethods } from './allowed-methods.js';
import { challengeFor } from './challenges.js';
import { RETRY_AFTER_SECONDS } from './conventions.js';
import { summaryOf, validationDetails } from './validation.js';

/*
 * How every failure is answered, in the one error body (errors.ts), whether it reaches a route,
 * misses every route, or never becomes a request at all. The headers a status promises go with
 * it here: Retry-After on a 503, WWW-Authenticate on a 401, Allow on a 405.
 */

export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  code: ErrorCode,
  message: string,
  details?: ErrorDetail[],
): void {
  const status = ERROR_STATUS[code];
  // A 503 is temporary by definition (an outage, a node stopping): say when to come back.
  if (status === 503) reply.header('retry-after', RETRY_AFTER_SECONDS);
  const challenge = status === 401 ? challengeFor(code, request) : undefined;
  if (challenge) reply.header('www-authenticate', challenge);
  // However a validation failure was found, its message names every problem its details list.
  const said = code === 'validation_failed' && details?.length ? summaryOf(details) : message;
  void reply
    .status(status)
    .header('x-request-id', request.id)
    .type('application/json; charset=utf-8')
    .send({ error: { code, message: said, ...(details?.length ? { details } : {}), requestId: request.id } });
}

/**
 * A request no route takes: 405 naming the methods in `Allow` when its path is a route's, else
 * 404. Either way before any credential check, so neither says more to a stranger than the API
 * reference does.
 */
export function answerUnrouted(allowed: AllowedMethods) {
  return (request: FastifyRequest, reply: FastifyReply): void => {
    const path = request.url.split('?')[0] ?? '/';
    const methods = allowed.at(path);
    // A route that sends its own request here (callNotFound) takes the method: that is a 404.
    if (methods.length === 0 || methods.includes(request.method)) {
      sendError(request, reply, 'route_not_found', `No route ${request.method} ${path}`);
      return;
    }
    reply.header('allow', methods.join(', '));
    sendError(
      request,
      reply,
      'method_not_allowed',
      `${path} does not take ${request.method}; it takes ${methods.join(', ')}`,
    );
  };
}

/** Errors Fastify raises before routing (a path segment too long, a URL that does not decode). */
export function answerFrameworkError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH')
    sendError(request, reply, 'uri_too_long', 'A path segment is too long');
  else sendError(request, reply, 'bad_request', 'The request URL is malformed');
}

/** Whatever a hook or handler throws: our own errors as they say, the rest mapped or a 500. */
export function answerFailure(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  if (error instanceof AppError) {
    sendError(request, reply, error.code, error.message, error.details);
    return;
  }
  if (error.validation) {
    const details = validationDetails(error.validation as never, error.validationContext);
    sendError(request, reply, 'validation_failed', 'The request is invalid', details);
    return;
  }
  const mapped = mapFrameworkError(error);
  if (mapped) {
    sendError(request, reply, mapped.code, mapped.message);
    return;
  }
  if (isDatabaseUnavailable(error)) {
    request.log.warn({ err: { message: error.message } }, 'http.request.database_unavailable');
    sendError(request, reply, 'database_unavailable', 'The database is unreachable right now; retry shortly');
    return;
  }
  request.log.error({ err: error }, 'http.request.failed');
  sendError(
    request,
    reply,
    'internal_error',
    'Something went wrong on our side; quote the requestId if you report it',
  );
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

/** The one error body for a request Fastify never sees. */
export function answerOutsideRoutes(res: ServerResponse, code: ErrorCode, message: string): void {
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
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
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
