import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import type { HttpApp } from './http-app.js';

/**
 * Responses checked against the schemas their routes declare, so a response cannot drift from
 * what the API reference promises. `log` reports a mismatch; `enforce` also answers 500 instead,
 * which makes every test touching the route fail.
 */
export type ResponseContractMode = 'off' | 'log' | 'enforce';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const formatsModule = addFormatsModule as unknown as FormatsPlugin & { default?: FormatsPlugin };
const addFormats: FormatsPlugin = formatsModule.default ?? formatsModule;

// No coercion, no defaults, nothing removed: the value is judged exactly as the client gets it.
const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, useDefaults: false });
addFormats(ajv);
ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);

const validators = new WeakMap<object, ValidateFunction>();

function validatorFor(schema: object): ValidateFunction {
  let validate = validators.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(schema, validate);
  }
  return validate;
}

interface ResponseEntry {
  type?: unknown;
  content?: Record<string, { schema?: object }>;
}

interface Problem {
  problem: string;
  errors?: { path: string; message: string }[];
}

function declaredResponse(request: FastifyRequest, status: number): ResponseEntry | null {
  const responses = request.routeOptions.schema?.response as Record<string, ResponseEntry> | undefined;
  if (!responses) return null;
  return responses[status] ?? responses[`${String(status)[0]}xx`] ?? responses.default ?? null;
}

function mediaTypeOf(reply: FastifyReply): string {
  const header = reply.getHeader('content-type');
  return String(header ?? '')
    .split(';')[0]
    ?.trim()
    .toLowerCase() as string;
}

const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');
const isEmptyEntry = (entry: ResponseEntry) => entry.type === 'null' && !entry.content;

/** The JSON schema a body of this media type must match, or a problem with the media type. */
function bodySchema(entry: ResponseEntry, mediaType: string): { schema: object | null } | Problem {
  if (entry.content) {
    for (const [declared, media] of Object.entries(entry.content)) {
      if (declared.split(';')[0]?.trim().toLowerCase() === mediaType) {
        return { schema: isJson(mediaType) ? (media.schema ?? null) : null };
      }
    }
    return { problem: `media type ${mediaType || '(none)'} is not declared` };
  }
  if (!isJson(mediaType)) return { problem: `media type ${mediaType || '(none)'} where JSON is declared` };
  return { schema: entry };
}

function validate(schema: object, value: unknown): Problem | null {
  const check = validatorFor(schema);
  if (check(value)) return null;
  return {
    problem: 'the body does not match the declared schema',
    errors: (check.errors ?? []).slice(0, 10).map((error: ErrorObject) => ({
      path: error.instancePath || '/',
      message: error.message ?? error.keyword,
    })),
  };
}

function isEmptyPayload(payload: unknown): boolean {
  if (payload === null || payload === undefined || payload === '') return true;
  return Buffer.isBuffer(payload) && payload.length === 0;
}

export function checkResponseContract(app: HttpApp, mode: ResponseContractMode): void {
  if (mode === 'off') return;
  // Bodies judged before serialization, so onSend does not judge them again after it.
  const judged = new WeakSet<FastifyRequest>();
  // Requests already answered 500 for a violation: their error answer is not judged again.
  const violated = new WeakSet<FastifyRequest>();

  const skip = (request: FastifyRequest) =>
    request.is404 || !request.routeOptions.url || violated.has(request);

  function violation(request: FastifyRequest, reply: FastifyReply, found: Problem): void {
    request.log.error(
      {
        route: `${request.method} ${request.routeOptions.url}`,
        status: reply.statusCode,
        problem: found.problem,
        ...(found.errors ? { errors: found.errors } : {}),
      },
      'http.response.contract_violation',
    );
    if (mode !== 'enforce') return;
    violated.add(request);
    throw new AppError(
      'internal_error',
      'Something went wrong on our side; quote the requestId if you report it',
    );
  }

  // Before serialization: the value the handler returned, as plain JSON would carry it, so a
  // wrong type is caught here instead of being coerced by the schema-driven serializer.
  app.addHook('preSerialization', async (request, reply, payload: unknown) => {
    if (skip(request)) return payload;
    const entry = declaredResponse(request, reply.statusCode);
    if (!entry) return payload;
    judged.add(request);
    if (isEmptyEntry(entry)) {
      violation(request, reply, { problem: 'a body where the response is declared empty' });
      return payload;
    }
    const found = bodySchema(entry, mediaTypeOf(reply));
    if ('problem' in found) {
      violation(request, reply, found);
      return payload;
    }
    let plain: unknown;
    try {
      plain = JSON.parse(JSON.stringify(payload));
    } catch {
      violation(request, reply, { problem: 'the body cannot be written as JSON' });
      return payload;
    }
    const mismatch = found.schema ? validate(found.schema, plain) : null;
    if (mismatch) violation(request, reply, mismatch);
    return payload;
  });

  // Every answer, whatever it carries: a declared status, the declared media type, and a body
  // that was written by hand (a string) judged as well.
  app.addHook('onSend', async (request, reply, payload: unknown) => {
    if (skip(request)) return payload;
    const entry = declaredResponse(request, reply.statusCode);
    if (!entry) {
      violation(request, reply, { problem: `status ${reply.statusCode} is not declared` });
      return payload;
    }
    if (request.method === 'HEAD') return payload;
    const empty = isEmptyPayload(payload);
    if (isEmptyEntry(entry)) {
      if (!empty) violation(request, reply, { problem: 'a body where the response is declared empty' });
      return payload;
    }
    if (empty) {
      violation(request, reply, { problem: 'no body where the response declares one' });
      return payload;
    }
    const mediaType = mediaTypeOf(reply);
    const found = bodySchema(entry, mediaType);
    if ('problem' in found) {
      violation(request, reply, found);
      return payload;
    }
    const text = typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString() : null;
    if (judged.has(request) || !found.schema || text === null) return payload;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      violation(request, reply, { problem: 'the body is not valid JSON' });
      return payload;
    }
    const mismatch = validate(found.schema, parsed);
    if (mismatch) violation(request, reply, mismatch);
    return payload;
  });
}
