import fc from 'fast-check';
import type { Operation } from './api-operations.js';
import type { WireRequest } from './raw-request.js';

/**
 * What every hostile operator builds on: the case it draws, the context of the operation it
 * mutates, the shared hostile text, and the plain request a case starts from.
 */

export interface HostileCase {
  operator: string;
  request: WireRequest;
  /** What the conventions promise a caller the route admits (docs/api-conventions.md). */
  expect?: { status: number; code?: string };
  /** Sent this many times at once (a double submit); rows may then change, so they are not compared. */
  burst?: number;
}

export interface CaseContext {
  op: Operation;
  /** Raw (unencoded) path values pointing to real rows. */
  pathValues: Record<string, string>;
  query: Record<string, string>;
  /** The plausible body (JSON or form) the operators mutate; undefined without one. */
  body: Record<string, unknown> | undefined;
  fields: Record<string, fc.Arbitrary<unknown>>;
  /** The plain body a well-behaved client sends (required fields only). */
  plainBody: unknown;
}

export const JSON_TYPE = 'application/json';
export const FORM_TYPE = 'application/x-www-form-urlencoded';
export const asciiText = (minLength: number, maxLength: number) =>
  fc.string({ unit: 'grapheme-ascii', minLength, maxLength });
const loneSurrogate = fc.oneof(
  fc.integer({ min: 0xd800, max: 0xdbff }),
  fc.integer({ min: 0xdc00, max: 0xdfff }),
);
/** Text with one lone surrogate inside; the neighbours are ASCII so it cannot pair up. */
export const withLoneSurrogate = fc
  .tuple(asciiText(0, 20), loneSurrogate, asciiText(0, 20))
  .map(([before, unit, after]) => `${before}${String.fromCharCode(unit)}${after}`);
export const withNul = fc
  .tuple(fc.string({ maxLength: 20 }), fc.string({ maxLength: 20 }))
  .map(([before, after]) => `${before}\u0000${after}`);

export function pathOf(ctx: CaseContext, override?: { param: string; raw: string }): string {
  return ctx.op.routeUrl.replace(/:([A-Za-z0-9_]+)/g, (_match, param: string) =>
    override?.param === param ? override.raw : encodeURIComponent(ctx.pathValues[param] ?? ''),
  );
}

export function queryOf(pairs: [string, string][], raw = ''): string {
  const encoded = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
  const all = [...encoded, ...(raw ? [raw] : [])];
  return all.length ? `?${all.join('&')}` : '';
}

export function baseRequest(
  ctx: CaseContext,
  parts: Partial<WireRequest> & { query?: string } = {},
): WireRequest {
  const { query, ...rest } = parts;
  const body = ctx.body === undefined ? undefined : encodeBody(ctx.op, ctx.body);
  return {
    method: ctx.op.method,
    path: pathOf(ctx) + (query ?? queryOf(Object.entries(ctx.query))),
    headers: body === undefined ? {} : { 'content-type': ctx.op.body?.mediaType ?? JSON_TYPE },
    ...(body === undefined ? {} : { body }),
    ...rest,
  };
}

export function encodeBody(op: Operation, value: unknown): string {
  if (op.body?.mediaType === FORM_TYPE)
    return new URLSearchParams(
      Object.entries(value as Record<string, unknown>).map(([k, v]): [string, string] => [k, String(v)]),
    ).toString();
  return JSON.stringify(value);
}

/** An operator's arbitraries for one operation: one per parameter or slot it must reach, or none. */
export type Operator = (ctx: CaseContext) => fc.Arbitrary<HostileCase> | fc.Arbitrary<HostileCase>[] | null;

export const bad = (status: number, code?: string) => ({ status, ...(code ? { code } : {}) });
