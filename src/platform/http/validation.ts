import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import type { ErrorDetail } from '../errors.js';
import { storableInstant } from './schemas.js';

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const formatsModule = addFormatsModule as unknown as FormatsPlugin & { default?: FormatsPlugin };
const addFormats: FormatsPlugin = formatsModule.default ?? formatsModule;
const rfc3339DateTime = (addFormats.get('date-time') as { validate: (text: string) => boolean }).validate;

function ajvWith(options: Options): Ajv {
  // verbose: errors carry their schema, so a schema's own `errorMessage` can be used.
  const ajv = new Ajv({ allErrors: true, strict: false, verbose: true, removeAdditional: false, ...options });
  addFormats(ajv);
  // ajv-formats also accepts a "urn:uuid:" prefix, which PostgreSQL's uuid type does not.
  ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  // RFC 3339 allows instants JavaScript's Date cannot hold (23:59:60) or the database keeps
  // differently (year 0000): a request's date-time must be both valid and storable.
  ajv.addFormat('date-time', {
    type: 'string',
    validate: (text: string) => rfc3339DateTime(text) && storableInstant(text) !== null,
  });
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
    const found = toDetail(error, context ?? 'body');
    // Header names as the interface writes them (Idempotency-Key), whatever case Node gives them.
    const detail = context === 'headers' ? { ...found, field: headerName(found.field) } : found;
    const key = `${detail.field}\u0000${detail.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    details.push(detail);
  }
  return details;
}

const headerName = (field: string) =>
  field
    .split('-')
    .map((word) => (word ? word[0]?.toUpperCase() + word.slice(1) : word))
    .join('-');

/** A validation failure's message stays short whatever the request: the details carry the rest. */
const MAX_SUMMARY_LENGTH = 500;

/**
 * The message of a validation failure: its one problem (`price: must be >= 0`), or how many there
 * are and each in turn (`3 problems: name: …; price: …; currency: …`), cut after MAX_SUMMARY_LENGTH
 * characters with how many more the details list.
 */
export function summaryOf(details: readonly ErrorDetail[]): string {
  const problems = details.map((detail) => `${detail.field}: ${detail.message}`);
  if (problems.length <= 1) return clipped(problems[0] ?? 'The request is invalid', MAX_SUMMARY_LENGTH);
  // Room is kept for the longest tail, so the summary never passes the bound.
  const room = MAX_SUMMARY_LENGTH - `; and ${problems.length} more`.length;
  let summary = clipped(`${problems.length} problems: ${problems[0]}`, room);
  for (let shown = 1; shown < problems.length; shown++) {
    const next = `${summary}; ${problems[shown]}`;
    if (next.length > room) return `${summary}; and ${problems.length - shown} more`;
    summary = next;
  }
  return summary;
}

/** A field a client named may be of any length; the message shows at most `length` characters (no half pair). */
const clipped = (text: string, length: number) =>
  text.length <= length ? text : `${text.slice(0, length - 1).replace(/[\uD800-\uDBFF]$/, '')}…`;

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

/** How deep a body, query or path value may nest; PostgreSQL's jsonb has its own, higher limit. */
const MAX_NESTING_DEPTH = 64;

// A high surrogate not followed by a low one, or a low one not preceded by a high one.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function textProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain NUL characters';
  if (LONE_SURROGATE.test(text)) return 'must be valid Unicode text (no lone surrogates)';
  return null;
}

/**
 * The first value the database cannot store as sent: text with a NUL character or a lone
 * surrogate (in a value or a key), a number that is not finite (`1e400` parses as Infinity), or
 * nesting deeper than MAX_NESTING_DEPTH. Checked on every body, query and path before validation;
 * the walk is iterative so no input can exhaust the stack. `field` is empty for the value itself.
 */
export function findUnstorableValue(value: unknown): ErrorDetail | null {
  const pending: { value: unknown; path: string; depth: number }[] = [{ value, path: '', depth: 0 }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value: current, path, depth } = next;
    if (typeof current === 'string') {
      const message = textProblem(current);
      if (message) return { field: path, message };
      continue;
    }
    if (typeof current === 'number') {
      if (!Number.isFinite(current)) return { field: path, message: 'must be a finite number' };
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth >= MAX_NESTING_DEPTH) {
      return {
        field: path.split('.')[0] ?? '',
        message: `must not nest deeper than ${MAX_NESTING_DEPTH} levels`,
      };
    }
    const entries = Object.entries(current);
    for (const [key] of entries) {
      // A bad key is reported on the object holding it: the key itself cannot be shown safely.
      const message = textProblem(key);
      if (message) return { field: path, message };
    }
    // Pushed in reverse so fields are reported in the order they were sent.
    for (const [key, child] of entries.reverse()) {
      pending.push({ value: child, path: path ? `${path}.${key}` : key, depth: depth + 1 });
    }
  }
  return null;
}
