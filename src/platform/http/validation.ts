import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { ErrorDetail } from '../errors.js';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const formatsModule = addFormatsModule as unknown as FormatsPlugin & { default?: FormatsPlugin };
const addFormats: FormatsPlugin = formatsModule.default ?? formatsModule;

function ajvWith(options: Options): Ajv {
  // verbose: errors carry their schema, so a schema's own `errorMessage` can be used.
  const ajv = new Ajv({ allErrors: true, strict: false, verbose: true, removeAdditional: false, ...options });
  addFormats(ajv);
  // ajv-formats also accepts a "urn:uuid:" prefix, which PostgreSQL's uuid type does not.
  ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  return ajv;
}

/**
 * Bodies are JSON and must already have the right types: "10" is not a price. Query strings
 * and path parameters are text by nature, so they are coerced and take schema defaults.
 * Unknown fields are refused everywhere (schemas say additionalProperties: false).
 */
const bodyAjv = ajvWith({ coerceTypes: false, useDefaults: false });
const textAjv = ajvWith({ coerceTypes: true, useDefaults: true });

export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? bodyAjv : textAjv).compile(schema as object);

/** Turns Ajv's errors into details that name the offending field in the caller's terms. */
export function validationDetails(
  errors: readonly ErrorObject[],
  context: string | undefined,
): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    const detail = toDetail(error, context ?? 'body');
    const key = `${detail.field}\u0000${detail.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    details.push(detail);
  }
  return details;
}

function toDetail(error: ErrorObject, context: string): ErrorDetail {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
    .join('.');
  const join = (name: string) => (path ? `${path}.${name}` : name);
  const params = error.params as Record<string, unknown>;
  const custom = (error.parentSchema as { errorMessage?: unknown } | undefined)?.errorMessage;
  if (
    typeof custom === 'string' &&
    error.keyword !== 'required' &&
    error.keyword !== 'additionalProperties'
  ) {
    return { field: path || context, message: custom };
  }
  switch (error.keyword) {
    case 'required':
      return { field: join(String(params.missingProperty)), message: 'is required' };
    case 'additionalProperties':
      return { field: join(String(params.additionalProperty)), message: 'is not a recognised field' };
    case 'enum':
      return {
        field: path || context,
        message: `must be one of: ${(params.allowedValues as unknown[]).map(String).join(', ')}`,
      };
    case 'format':
      return { field: path || context, message: `must be a valid ${String(params.format)}` };
    default:
      return { field: path || context, message: error.message ?? 'is invalid' };
  }
}

/**
 * The path of the first string holding a NUL character, which PostgreSQL text cannot store;
 * checked on every body, query and path before validation so it never reaches the database.
 */
export function findNulCharacter(value: unknown, path: string): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (value === null || typeof value !== 'object') return null;
  for (const [key, child] of Object.entries(value)) {
    if (key.includes('\u0000')) return path || 'body';
    const found = findNulCharacter(child, path ? `${path}.${key}` : key);
    if (found !== null) return found;
  }
  return null;
}
