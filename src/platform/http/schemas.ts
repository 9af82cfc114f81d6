import Type, { type Static, type TSchema } from 'typebox';
import { invalidField } from '../errors.js';

/** Shapes shared by every module's routes. */

export const ErrorBody = Type.Object({
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    details: Type.Optional(Type.Array(Type.Object({ field: Type.String(), message: Type.String() }))),
    requestId: Type.String(),
  }),
});

/** ISO 8601 UTC with milliseconds, as every timestamp in responses. */
export const Timestamp = Type.String({ format: 'date-time' });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);

const EARLIEST_INSTANT = Date.UTC(1970, 0, 1);
const LATEST_INSTANT = Date.UTC(10000, 0, 1) - 1;

/**
 * The instant an RFC 3339 date-time names, or null when JavaScript or the database cannot hold
 * it the same way on both drivers: a leap second (23:59:60), or a year outside 1970–9999. The
 * validator's `date-time` format applies this to every request field, so none reaches SQL as NaN.
 */
export function storableInstant(text: string): Date | null {
  const at = new Date(text);
  const ms = at.getTime();
  return ms >= EARLIEST_INSTANT && ms <= LATEST_INSTANT ? at : null;
}

const DATE_TIME_MESSAGE = 'must be an ISO 8601 date-time with a time zone, between 1970 and 9999';

/** A date-time a request carries (a filter, an expiry); see storableInstant for what is refused. */
export const DateTime = Type.String({ format: 'date-time', errorMessage: DATE_TIME_MESSAGE });

/** A request's date-time field as a Date, refused (naming the field) as its schema would refuse it. */
export function requestInstant(text: string, field: string): Date {
  const at = storableInstant(text);
  if (!at) throw invalidField(field, DATE_TIME_MESSAGE);
  return at;
}

export const Uuid = Type.String({ format: 'uuid' });

/** The query of a route that takes no parameters: any one sent is refused, naming it. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

export const PageQuery = {
  limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000, default: 0 }),
};

export interface Page {
  limit: number;
  offset: number;
}

export function pageOf(query: Partial<Page>): Page {
  return { limit: query.limit ?? DEFAULT_PAGE_SIZE, offset: query.offset ?? 0 };
}

export const Email = Type.String({ format: 'email', minLength: 3, maxLength: 254 });

export function iso(date: Date): string {
  return date.toISOString();
}

export function isoOrNull(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}

/**
 * The schema, or null. Written as `type: [t, 'null']` rather than anyOf, so a bad value gets
 * one clear error instead of one per branch.
 */
export function Nullable<T extends TSchema>(schema: T) {
  const raw = schema as unknown as { type?: string; enum?: unknown[] };
  const widened = raw.enum
    ? { ...schema, enum: [...raw.enum, null] }
    : { ...schema, type: [raw.type, 'null'] };
  return Type.Unsafe<Static<T> | null>(widened);
}

/** An absolute http(s) URL of at most 2000 characters. */
export const HttpUrl = Type.String({
  maxLength: 2000,
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://[^\\s/?#]+[^\\s]*$',
  format: 'uri',
  errorMessage: 'must be an absolute http or https URL of at most 2000 characters',
});

/** Free text that must hold at least one visible character. */
export function Text(maxLength: number) {
  return Type.String({
    minLength: 1,
    maxLength,
    pattern: '\\S',
    errorMessage: `must be 1 to ${maxLength} characters, not blank`,
  });
}

/**
 * A response that is not JSON (an HTML page, a stylesheet, a script), declared so the API
 * reference lists it with its media type.
 */
export function textResponse(mediaType: string, description: string) {
  return { description, content: { [mediaType]: { schema: Type.String() } } };
}

/** A list's order as a query asks it: a column, ascending, or `-column`, descending. */
export interface Sort<C extends string> {
  column: C;
  descending: boolean;
}

/**
 * The `sort` query parameter of a list: one of `columns`, `-` before it for descending. Anything
 * else is refused naming `sort`.
 */
export function SortQuery<C extends string>(columns: readonly C[], fallback: string) {
  const allowed = columns.flatMap((column) => [column, `-${column}`]);
  return Type.Optional(
    Type.Enum(allowed, {
      description: `One of ${columns.join(', ')}; a leading - sorts descending. Default ${fallback}; ties in id order, empty values last.`,
      errorMessage: `must be one of ${columns.join(', ')}, with a leading - for descending`,
    }),
  );
}

/** The sort a query named (as SortQuery allowed it), or `fallback`. */
export function sortOf<C extends string>(text: string | undefined, fallback: Sort<C>): Sort<C> {
  if (!text) return fallback;
  return text.startsWith('-')
    ? { column: text.slice(1) as C, descending: true }
    : { column: text as C, descending: false };
}
