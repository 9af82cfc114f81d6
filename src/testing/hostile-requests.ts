import { createHash } from 'node:crypto';
import http from 'node:http';
import fc from 'fast-check';
import { DEFAULT_BODY_LIMIT } from '../platform/http/create-http-app.js';
import { type Operation, operationName, type Parameter } from './api-operations.js';
import { signUp, type TestServer } from './harness.js';
import {
  allowedTypes,
  dateTimeArbitrary,
  type JsonSchema,
  jsonTypeOf,
  plausibleValue,
  validArbitrary,
} from './schema-arbitrary.js';
import {
  changedTables,
  createSellerEstate,
  estateFields,
  estateIdFor,
  snapshotRows,
} from './seller-estate.js';

/**
 * Malformed and adversarial requests for every operation of a host's OpenAPI document, made by
 * fast-check from the operation's own schemas and a fixed set of mutation operators (wrong type,
 * missing and unknown fields, text past its limit, NUL, lone surrogates, deep nesting, bad ids,
 * bad query values, wrong content types, broken JSON, no Host...). Each operator applies to the
 * operations it fits and draws `casesPerOperator` cases per operation from a seed derived from
 * the operation's name, so a failure reproduces with the same seed.
 */

export interface WireRequest {
  method: string;
  /** Sent as is: already encoded, never normalised (`..` stays). */
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  omitHost?: boolean;
}

export interface WireResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** A request over a plain socket, so paths, headers and bytes arrive exactly as written. */
export function sendRaw(origin: string, request: WireRequest, timeoutMs: number): Promise<WireResponse> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: url.hostname,
      port: url.port,
      method: request.method,
      path: request.path,
      headers: {
        ...request.headers,
        ...(request.body !== undefined ? { 'content-length': String(Buffer.byteLength(request.body)) } : {}),
      },
      setHost: !request.omitHost,
      agent: false,
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString(),
        }),
      );
    });
    req.end(request.body);
  });
}

interface HostileCase {
  operator: string;
  request: WireRequest;
  /** What the conventions promise a caller the route admits (docs/api-conventions.md). */
  expect?: { status: number; code?: string };
  /** Sent this many times at once (a double submit); rows may then change, so they are not compared. */
  burst?: number;
}

export interface Principal {
  name: string;
  token: string;
  /** Which auth requirements this principal meets (its token passes the door). */
  meets: readonly Operation['auth'][];
}

interface CaseContext {
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

const JSON_TYPE = 'application/json';
const FORM_TYPE = 'application/x-www-form-urlencoded';
const asciiText = (minLength: number, maxLength: number) =>
  fc.string({ unit: 'grapheme-ascii', minLength, maxLength });
const loneSurrogate = fc.oneof(
  fc.integer({ min: 0xd800, max: 0xdbff }),
  fc.integer({ min: 0xdc00, max: 0xdfff }),
);
/** Text with one lone surrogate inside; the neighbours are ASCII so it cannot pair up. */
const withLoneSurrogate = fc
  .tuple(asciiText(0, 20), loneSurrogate, asciiText(0, 20))
  .map(([before, unit, after]) => `${before}${String.fromCharCode(unit)}${after}`);
const withNul = fc
  .tuple(fc.string({ maxLength: 20 }), fc.string({ maxLength: 20 }))
  .map(([before, after]) => `${before}\u0000${after}`);
/** Any JSON value without `__proto__` or `constructor` keys, which the parser refuses as invalid_json on purpose. */
const plainJson = (maxDepth: number) =>
  fc.jsonValue({ maxDepth }).filter((value) => !/"(__proto__|constructor)":/.test(JSON.stringify(value)));
const SENTINEL = '"\u{1F9EA}raw\u{1F9EA}"';

function pathOf(ctx: CaseContext, override?: { param: string; raw: string }): string {
  return ctx.op.routeUrl.replace(/:([A-Za-z0-9_]+)/g, (_match, param: string) =>
    override?.param === param ? override.raw : encodeURIComponent(ctx.pathValues[param] ?? ''),
  );
}

function queryOf(pairs: [string, string][], raw = ''): string {
  const encoded = pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
  const all = [...encoded, ...(raw ? [raw] : [])];
  return all.length ? `?${all.join('&')}` : '';
}

function baseRequest(ctx: CaseContext, parts: Partial<WireRequest> & { query?: string } = {}): WireRequest {
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

function encodeBody(op: Operation, value: unknown): string {
  if (op.body?.mediaType === FORM_TYPE)
    return new URLSearchParams(
      Object.entries(value as Record<string, unknown>).map(([k, v]): [string, string] => [k, String(v)]),
    ).toString();
  return JSON.stringify(value);
}

/** Places in the body where a hostile value can go: text fields, numbers, objects open to new keys. */
function slotsOf(
  value: unknown,
  schema: JsonSchema,
  path: string[] = [],
): { path: string[]; kind: string }[] {
  if (typeof value === 'string') return [{ path, kind: 'string' }];
  if (typeof value === 'number') return [{ path, kind: 'number' }];
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return [];
  const open = schema.additionalProperties !== undefined && schema.additionalProperties !== false;
  const inner = Object.entries(value).flatMap(([key, child]) =>
    slotsOf(child, schema.properties?.[key] ?? {}, [...path, key]),
  );
  return [...(open ? [{ path: [...path, 'hostile'], kind: 'open' }] : []), ...inner];
}

function setAt(
  value: Record<string, unknown>,
  path: string[],
  replacement: unknown,
): Record<string, unknown> {
  const copy = structuredClone(value);
  let node: Record<string, unknown> = copy;
  for (const key of path.slice(0, -1)) {
    node[key] ??= {};
    node = node[key] as Record<string, unknown>;
  }
  node[path[path.length - 1] ?? 'hostile'] = replacement;
  return copy;
}

type Slot = { path: string[]; kind: string };

/**
 * A poison operator's arbitraries: one over a random slot, and one for each object open to new
 * keys (only the unstorable-value check guards those, so each is tried every time). A body
 * without slots gets a new field at the top, which the schema then refuses.
 */
function perSlot(ctx: CaseContext, build: (slots: fc.Arbitrary<Slot>) => fc.Arbitrary<HostileCase>) {
  if (!jsonBody(ctx)) return null;
  const slots = slotsOf(ctx.body, ctx.op.body?.schema ?? {});
  if (!slots.length) return [build(fc.constant({ path: ['hostile'], kind: 'open' }))];
  return [
    build(fc.constantFrom(...slots)),
    ...slots.filter((slot) => slot.kind === 'open').map((slot) => build(fc.constant(slot))),
  ];
}

/** The body as JSON text with raw text (a number JSON.stringify cannot write, deep nesting) at a slot. */
function withRawValue(ctx: CaseContext, path: string[], raw: string): string {
  return JSON.stringify(setAt(ctx.body ?? {}, path, JSON.parse(SENTINEL))).replace(SENTINEL, raw);
}

/** An operator's arbitraries for one operation: one per parameter or slot it must reach, or none. */
type Operator = (ctx: CaseContext) => fc.Arbitrary<HostileCase> | fc.Arbitrary<HostileCase>[] | null;

const bad = (status: number, code?: string) => ({ status, ...(code ? { code } : {}) });

/** One arbitrary per path parameter: the parameter replaced by raw (already encoded) text. */
function perPathParam(
  ctx: CaseContext,
  operator: string,
  values: (param: Parameter) => fc.Arbitrary<string>,
  expect: (param: Parameter, raw: string) => HostileCase['expect'],
) {
  return ctx.op.pathParams.map((param) =>
    values(param).map((raw) => {
      const expected = expect(param, raw);
      return {
        operator,
        request: baseRequest(ctx, { path: pathOf(ctx, { param: param.name, raw }) }),
        ...(expected ? { expect: expected } : {}),
      };
    }),
  );
}

/** Path parameters: not ids, too long, Unicode, dot segments, NUL, broken escapes, unknown ids. */
const pathOperators: Operator[] = [
  (ctx) =>
    perPathParam(
      ctx,
      'path.not-an-id',
      () =>
        fc
          .oneof(
            asciiText(1, 40).map(encodeURIComponent),
            fc.uuid().map((id) => `{${id}}`),
            fc.uuid().map((id) => `urn%3Auuid%3A${id}`),
            fc.uuid().map((id) => id.replace(/-/g, '')),
          )
          .filter((raw) => raw.length > 0 && !/^[0-9a-f-]{36}$/i.test(decodeURIComponent(raw))),
      (param) => (param.schema.format === 'uuid' ? bad(400, 'validation_failed') : undefined),
    ),
  (ctx) =>
    perPathParam(
      ctx,
      'path.too-long',
      () => fc.stringMatching(/^[A-Za-z0-9]{201,3000}$/),
      () => bad(414, 'uri_too_long'),
    ),
  (ctx) =>
    perPathParam(
      ctx,
      'path.hostile-segment',
      () =>
        fc.oneof(
          fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).map(encodeURIComponent),
          fc.constantFrom('..', '.', '%2e%2e', '..%2F..%2Fadmin', '%2F'),
          asciiText(0, 10).map((text) => `${encodeURIComponent(text)}%00`),
          fc.constantFrom('%ZZ', '%E0%A4%A', '%ED%A0%80', '%C0%AF', '%'),
          fc.uuid(),
        ),
      (_param, raw) => (raw.includes('%00') ? bad(400) : undefined),
    ),
];

const leapSecond = fc
  .date({ noInvalidDate: true })
  .map((date) => `${date.toISOString().slice(0, 10)}T23:59:60Z`);
/** Date-times the format may admit that a Date cannot hold or that sit at the edges: year 0, past 9999. */
const edgeDateTime = fc.constantFrom(
  '0000-01-01T00:00:00Z',
  '9999-12-31T23:59:60.999+14:00',
  '+275760-09-13T00:00:00.001Z',
  '2030-02-30T00:00:00Z',
  '2030-06-30T24:00:00Z',
);

/** What a query parameter of this schema is sent instead of a plain value: one arbitrary per kind. */
function hostileQueryValues(param: Parameter): fc.Arbitrary<string>[] {
  const types = allowedTypes(param.schema);
  if (param.schema.format === 'date-time')
    return [leapSecond, fc.oneof(edgeDateTime, dateTimeArbitrary, asciiText(0, 30))];
  if (types.includes('integer') || types.includes('number'))
    return [
      fc.constantFrom('1e400', '-1e400', 'NaN', 'Infinity', '0x10', '-0', '1.5', '-1', ''),
      fc.oneof(fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String), asciiText(1, 20)),
    ];
  return [
    fc.oneof(
      fc.string({ unit: 'grapheme', maxLength: 30 }),
      asciiText(1, 20),
      fc.stringMatching(/^[A-Za-z0-9]{2000,6000}$/),
    ),
  ];
}

/** Query values: unknown names, wrong types, huge and negative numbers, leap seconds, arrays, NUL. */
const queryOperators: Operator[] = [
  (ctx) =>
    fc
      .tuple(fc.stringMatching(/^[a-z][A-Za-z0-9_]{0,20}$/), asciiText(0, 20))
      .filter(([name]) => !ctx.op.query.some((q) => q.name === name))
      .map(([name, value]) => ({
        operator: 'query.unknown-parameter',
        request: baseRequest(ctx, { query: queryOf([...Object.entries(ctx.query), [name, value]]) }),
        expect: bad(400, 'validation_failed'),
      })),
  (ctx) =>
    ctx.op.query.flatMap((param) =>
      hostileQueryValues(param).map((values) =>
        values.map((value) => {
          const types = allowedTypes(param.schema);
          const numeric = types.includes('integer') || types.includes('number');
          return {
            operator: 'query.hostile-value',
            request: baseRequest(ctx, {
              query: queryOf([...Object.entries(ctx.query), [param.name, value]]),
            }),
            // Query text is converted as Number() reads it (`0x10` is 16); what it cannot read is refused.
            ...(numeric && value.trim() !== '' && Number.isNaN(Number(value))
              ? { expect: bad(400, 'validation_failed') }
              : {}),
          };
        }),
      ),
    ),
  (ctx) => {
    if (!ctx.op.query.length) return null;
    return fc
      .tuple(fc.constantFrom(...ctx.op.query), fc.array(asciiText(0, 10), { minLength: 2, maxLength: 5 }))
      .map(([param, values]) => ({
        operator: 'query.array-for-scalar',
        request: baseRequest(ctx, {
          query: queryOf([
            ...Object.entries(ctx.query),
            ...values.map((v): [string, string] => [param.name, v]),
          ]),
        }),
      }));
  },
  (ctx) => {
    if (!ctx.op.query.length) return null;
    return fc
      .tuple(fc.constantFrom(...ctx.op.query), fc.oneof(withNul, withLoneSurrogate))
      .map(([param, value]) => ({
        operator: 'query.unstorable-text',
        // A lone surrogate cannot be percent-encoded as UTF-8: it goes as the bytes of its code unit.
        request: baseRequest(ctx, {
          query: queryOf(Object.entries(ctx.query), `${param.name}=${escapeUnits(value)}`),
        }),
        ...(value.includes('\u0000') ? { expect: bad(400, 'validation_failed') } : {}),
      }));
  },
  (ctx) =>
    fc
      .record(
        Object.fromEntries(ctx.op.query.map((q) => [q.name, validArbitrary(q.schema, ctx.fields, q.name)])),
        { requiredKeys: ctx.op.query.filter((q) => q.required).map((q) => q.name) },
      )
      .map((query) => ({
        operator: 'query.valid-shaped',
        request: baseRequest(ctx, {
          query: queryOf(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)])),
        }),
      })),
];

/** Percent-encodes text by UTF-16 code unit where a unit is lone (as CESU-8 would), else as UTF-8. */
function escapeUnits(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const next = text.charCodeAt(i + 1);
    if (unit >= 0xd800 && unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      out += encodeURIComponent(text.slice(i, i + 2));
      i++;
    } else if (unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
        .map((byte) => `%${byte.toString(16).toUpperCase()}`)
        .join('');
    } else out += encodeURIComponent(text[i] ?? '');
  }
  return out;
}

const jsonBody = (ctx: CaseContext) => ctx.op.body?.mediaType === JSON_TYPE && ctx.body !== undefined;
const jsonCase = (ctx: CaseContext, operator: string, text: string, expect?: HostileCase['expect']) => ({
  operator,
  request: baseRequest(ctx, { body: text, headers: { 'content-type': JSON_TYPE } }),
  ...(expect ? { expect } : {}),
});

/** JSON bodies: schema-valid edges, and every way a body can be wrong. */
const jsonOperators: Operator[] = [
  (ctx) =>
    jsonBody(ctx)
      ? fc
          .oneof(
            validArbitrary(ctx.op.body?.schema ?? {}, ctx.fields),
            validArbitrary(ctx.op.body?.schema ?? {}),
          )
          .map((value) => jsonCase(ctx, 'body.valid-shaped', JSON.stringify(value)))
      : null,
  (ctx) => {
    const required = ctx.op.body?.schema.required ?? [];
    if (!jsonBody(ctx) || !required.length) return null;
    return fc.constantFrom(...required).map((name) => {
      const { [name]: _dropped, ...rest } = ctx.body ?? {};
      return jsonCase(ctx, 'body.missing-required', JSON.stringify(rest), bad(400, 'validation_failed'));
    });
  },
  (ctx) => {
    const schema = ctx.op.body?.schema;
    if (!jsonBody(ctx) || schema?.additionalProperties !== false) return null;
    return fc
      .tuple(fc.string({ minLength: 1, maxLength: 30 }), plainJson(2))
      .filter(
        ([name]) => !(name in (schema.properties ?? {})) && !['__proto__', 'constructor'].includes(name),
      )
      .map(([name, value]) =>
        jsonCase(
          ctx,
          'body.unknown-field',
          JSON.stringify({ ...ctx.body, [name]: value }),
          bad(400, 'validation_failed'),
        ),
      );
  },
  (ctx) => {
    const properties = Object.entries(ctx.op.body?.schema.properties ?? {});
    if (!jsonBody(ctx) || !properties.length) return null;
    return fc.tuple(fc.constantFrom(...properties), plainJson(3)).map(([[name, schema], value]) => {
      const allowed = allowedTypes(schema);
      const type = jsonTypeOf(value);
      const wrong =
        allowed.length > 0 && !allowed.includes(type) && !(type === 'integer' && allowed.includes('number'));
      return jsonCase(
        ctx,
        'body.wrong-type',
        JSON.stringify({ ...ctx.body, [name]: value }),
        wrong ? bad(400, 'validation_failed') : undefined,
      );
    });
  },
  (ctx) => {
    const limited = Object.entries(ctx.op.body?.schema.properties ?? {}).filter(
      ([, schema]) => schema.maxLength !== undefined,
    );
    if (!jsonBody(ctx) || !limited.length) return null;
    return fc
      .tuple(fc.constantFrom(...limited), fc.integer({ min: 1, max: 5000 }), fc.boolean())
      .map(([[name, schema], extra, nearLimit]) => {
        // Either just past the field's limit, or a body just under the whole-body limit.
        const length = nearLimit ? DEFAULT_BODY_LIMIT - 1024 - extra : (schema.maxLength ?? 0) + extra;
        return jsonCase(
          ctx,
          nearLimit ? 'body.near-body-limit' : 'body.past-max-length',
          JSON.stringify({ ...ctx.body, [name]: 'y'.repeat(length) }),
          bad(400, 'validation_failed'),
        );
      });
  },
  (ctx) =>
    jsonBody(ctx)
      ? fc.integer({ min: 1, max: 64 * 1024 }).map((extra) => {
          const padding = 'z'.repeat(DEFAULT_BODY_LIMIT + extra);
          return jsonCase(ctx, 'body.past-body-limit', JSON.stringify({ ...ctx.body, padding }), bad(413));
        })
      : null,
  (ctx) =>
    perSlot(ctx, (slots) =>
      fc.tuple(slots, fc.oneof(withNul, withLoneSurrogate), fc.boolean()).map(([slot, poison, asKey]) => {
        const body = asKey
          ? setAt(ctx.body ?? {}, [...slot.path.slice(0, -1), 'meta'], { [poison]: 1 })
          : setAt(ctx.body ?? {}, slot.path, poison);
        const operator = poison.includes('\u0000') ? 'body.nul' : 'body.lone-surrogate';
        return jsonCase(ctx, operator, JSON.stringify(body), bad(400));
      }),
    ),
  (ctx) =>
    perSlot(ctx, (slots) =>
      fc
        .tuple(slots, fc.constantFrom('1e400', '-1e400', '1e-400', '123456789012345678901234567890'))
        .map(([slot, number]) => {
          const text = withRawValue(ctx, slot.path, number);
          return jsonCase(ctx, 'body.extreme-number', text, number.endsWith('e400') ? bad(400) : undefined);
        }),
    ),
  (ctx) =>
    perSlot(ctx, (slots) =>
      fc.tuple(slots, fc.integer({ min: 65, max: 120_000 }), fc.boolean()).map(([slot, depth, arrays]) => {
        const [open, close] = arrays ? ['[', ']'] : ['{"a":', '}'];
        const text = withRawValue(ctx, slot.path, `${open.repeat(depth)}1${close.repeat(depth)}`);
        return jsonCase(ctx, 'body.deep-nesting', text, bad(text.length > DEFAULT_BODY_LIMIT ? 413 : 400));
      }),
    ),
  (ctx) => {
    if (!jsonBody(ctx)) return null;
    const text = JSON.stringify(ctx.body);
    return fc
      .oneof(
        fc.nat({ max: text.length - 1 }).map((cut) => text.slice(0, cut)),
        fc.string({ minLength: 1, maxLength: 10 }).map((junk) => `${text}${junk}`),
        fc.constantFrom("{'a':1}", '{a:1}', '{"a":1,}', '[1,]', 'undefined', '\u0000{}', '{"a":"\\x41"}'),
      )
      .filter((candidate) => !parses(candidate))
      .map((broken) => jsonCase(ctx, 'body.invalid-json', broken, bad(400, 'invalid_json')));
  },
  (ctx) => {
    const keys = Object.keys(ctx.body ?? {});
    if (!jsonBody(ctx) || !keys.length) return null;
    return fc.tuple(fc.constantFrom(...keys), plainJson(2)).map(([key, value]) => {
      const text = JSON.stringify(ctx.body);
      return jsonCase(
        ctx,
        'body.duplicate-key',
        `${text.slice(0, -1)},${JSON.stringify(key)}:${JSON.stringify(value)}}`,
      );
    });
  },
  (ctx) =>
    jsonBody(ctx)
      ? fc
          .oneof(
            plainJson(2).filter((value) => jsonTypeOf(value) !== 'object'),
            fc.constantFrom(
              '{"__proto__":{"role":"ADMIN"}}',
              '{"constructor":{"prototype":{"role":"ADMIN"}}}',
            ),
          )
          .map((value) =>
            jsonCase(
              ctx,
              'body.wrong-root',
              typeof value === 'string' && value.startsWith('{') ? value : JSON.stringify(value),
              bad(400),
            ),
          )
      : null,
];

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The plain body with a suffix on each free text field it still fits (an attempt id, a name), so
 * every burst is a new request racing itself rather than a replay of an earlier one.
 */
function freshen(ctx: CaseContext, suffix: string): unknown {
  const properties = ctx.op.body?.schema.properties ?? {};
  const body = { ...(ctx.plainBody as Record<string, unknown>) };
  for (const [name, value] of Object.entries(body)) {
    const schema = properties[name];
    if (typeof value !== 'string' || !schema || name in ctx.fields || schema.format || schema.enum) continue;
    const fits = (text: string) =>
      text.length <= (schema.maxLength ?? Infinity) &&
      (!schema.pattern || new RegExp(schema.pattern).test(text));
    // Appended, or in place of the value's tail when it is already as long as it may be.
    const fresh = [`${value}${suffix}`, `${value.slice(0, -suffix.length)}${suffix}`].find(fits);
    if (fresh !== undefined) body[name] = fresh;
  }
  return body;
}

/** Content types and headers: text, forms, none at all, no Host. */
const wireOperators: Operator[] = [
  (ctx) =>
    ctx.op.method !== 'GET' && ctx.plainBody !== undefined
      ? fc.stringMatching(/^[A-Za-z0-9]{8}$/).map((suffix) => ({
          operator: 'burst.same-request',
          request: { ...baseRequest(ctx), body: encodeBody(ctx.op, freshen(ctx, suffix)) },
          burst: 5,
        }))
      : null,
  (ctx) => {
    if (!['POST', 'PUT', 'PATCH', 'DELETE'].includes(ctx.op.method)) return null;
    const text = ctx.body === undefined ? '{}' : JSON.stringify(ctx.body);
    const form = ctx.op.body?.mediaType === FORM_TYPE;
    return fc
      .constantFrom(
        { type: 'text/plain', expect: bad(415, 'unsupported_media_type') },
        { type: FORM_TYPE, expect: form ? undefined : bad(415, 'unsupported_media_type') },
        { type: 'multipart/form-data; boundary=x', expect: bad(415, 'unsupported_media_type') },
        { type: 'application/json; charset=utf-16', expect: undefined },
        { type: '', expect: undefined },
      )
      .map(({ type, expect }) => ({
        operator: `content-type.${type.split(';')[0] || 'none'}`,
        request: baseRequest(ctx, {
          body: type === FORM_TYPE && !form ? 'a=1&b=2' : text,
          headers: type ? { 'content-type': type } : {},
        }),
        ...(ctx.op.responses['415'] && expect ? { expect } : {}),
      }));
  },
  (ctx) =>
    ctx.op.body?.mediaType === FORM_TYPE && ctx.body !== undefined
      ? fc
          .oneof(
            validArbitrary(ctx.op.body.schema, ctx.fields).map((value) => ({
              operator: 'form.valid-shaped',
              body: new URLSearchParams(
                Object.entries(value as Record<string, unknown>).map(([k, v]): [string, string] => [
                  k,
                  String(v),
                ]),
              ).toString(),
              expect: undefined,
            })),
            asciiText(1, 20)
              .filter((name) => !(name in (ctx.op.body?.schema.properties ?? {})))
              .map((name) => ({
                operator: 'form.unknown-field',
                body: `${encodeBody(ctx.op, ctx.body)}&${encodeURIComponent(name)}=1`,
                expect: bad(400),
              })),
            fc.constantFrom('%00', '%ED%A0%80', '%ZZ').map((raw) => ({
              operator: 'form.hostile-value',
              body: `${encodeBody(ctx.op, ctx.body)}&email=a${raw}`,
              expect: raw === '%00' ? bad(400) : undefined,
            })),
          )
          .map(({ operator, body, expect }) => ({
            operator,
            request: baseRequest(ctx, { body }),
            ...(expect ? { expect } : {}),
          }))
      : null,
  (ctx) =>
    fc.constant({
      operator: 'header.no-host',
      request: baseRequest(ctx, { omitHost: true }),
      expect: bad(400, 'bad_request'),
    }),
];

const OPERATORS = [...pathOperators, ...queryOperators, ...jsonOperators, ...wireOperators];

function seedOf(base: number, name: string): number {
  return (base ^ createHash('sha256').update(name).digest().readInt32BE(0)) | 0;
}

export interface CampaignOptions {
  operations: Operation[];
  principals: Principal[];
  /** Real ids for the path parameters of each operation. */
  pathValues(op: Operation): Record<string, string>;
  /** Named body fields pinned to real values (a product id, a license key). */
  fields: Record<string, unknown>;
  /** Users whose rows a refused request must leave alone. */
  watchedUsers: string[];
  casesPerOperator: number;
  seed: number;
  timeoutMs: number;
  /** Progress of long runs. */
  onOperation?(name: string, done: number, total: number): void;
}

export interface Finding {
  operation: string;
  principal: string;
  operator: string;
  problem: string;
  status: number;
  request: WireRequest;
  response: string;
  /** The campaign's seed: HOSTILE_SEED (with the same HOSTILE_CASES) sends this request again. */
  seed: number;
}

export interface CampaignReport {
  requests: number;
  byOperator: Record<string, number>;
  byStatus: Record<string, number>;
  findings: Finding[];
}

/** Sends every generated case to its host as each principal and collects what went wrong. */
export async function runHostileCampaign(
  server: TestServer,
  options: CampaignOptions,
): Promise<CampaignReport> {
  const report: CampaignReport = { requests: 0, byOperator: {}, byStatus: {}, findings: [] };
  const origin = (op: Operation) => (op.host === 'core' ? server.service.coreUrl : server.service.payUrl);
  // Deletions last, so the rows other operations address still exist while they are tried.
  const ordered = [...options.operations].sort(
    (a, b) => Number(a.method === 'DELETE') - Number(b.method === 'DELETE'),
  );
  let done = 0;
  // The watched rows as last read; only a write that was not refused can have moved them since.
  let known: Record<string, string> | null = null;
  for (const op of ordered) {
    const name = operationName(op);
    const seed = seedOf(options.seed, name);
    const pinned = Object.fromEntries(
      Object.entries(options.fields).map(([key, value]) => [key, fc.constant(value)]),
    );
    const ctx: CaseContext = {
      op,
      pathValues: options.pathValues(op),
      query: Object.fromEntries(
        op.query
          .filter((q) => q.required)
          .map((q) => [q.name, String(plausibleValue(q.schema, options.fields, q.name))]),
      ),
      // Every field present, so each is a place hostile values can go.
      body: op.body
        ? (plausibleValue(op.body.schema, options.fields, undefined, { everyField: true }) as Record<
            string,
            unknown
          >)
        : undefined,
      fields: pinned,
      // Pinned fields go in even when optional (a buyer's e-mail), so the plain body gets past the checks.
      plainBody: op.body
        ? {
            ...(plausibleValue(op.body.schema, options.fields) as Record<string, unknown>),
            ...Object.fromEntries(
              Object.entries(options.fields).filter(([name]) => name in (op.body?.schema.properties ?? {})),
            ),
          }
        : undefined,
    };
    const cases = OPERATORS.flatMap((operator, index) => {
      return [operator(ctx) ?? []]
        .flat()
        .flatMap((arbitrary, at) =>
          fc.sample(arbitrary, { seed: seed + index * 1000 + at, numRuns: options.casesPerOperator }),
        );
    });
    for (const principal of options.principals) {
      const admitted = op.auth === 'public' || principal.meets.includes(op.auth);
      for (const kase of cases) {
        const request: WireRequest = {
          ...kase.request,
          headers: {
            ...kase.request.headers,
            ...(op.host === 'core' && op.auth !== 'public'
              ? { authorization: `Bearer ${principal.token}` }
              : {}),
          },
        };
        const finding = (problem: string, status = 0, response = '') =>
          report.findings.push({
            operation: name,
            principal: principal.name,
            operator: kase.operator,
            problem,
            status,
            request,
            response: response.slice(0, 500),
            seed: options.seed,
          });
        const write = op.method !== 'GET';
        if (write && !kase.burst && !known) known = await snapshotRows(server.db, options.watchedUsers);
        const before = write && !kase.burst ? known : null;
        const answers = await Promise.all(
          Array.from({ length: kase.burst ?? 1 }, () =>
            sendRaw(origin(op), request, options.timeoutMs).catch((error: Error) => error),
          ),
        );
        for (const answer of answers) {
          if (answer instanceof Error) {
            finding(`no answer: ${answer.message}`);
            continue;
          }
          report.requests++;
          report.byOperator[kase.operator] = (report.byOperator[kase.operator] ?? 0) + 1;
          report.byStatus[answer.status] = (report.byStatus[answer.status] ?? 0) + 1;
          for (const problem of problemsOf(op, kase, answer, admitted))
            finding(problem, answer.status, answer.text);
        }
        const res = answers[0];
        // A declined payment (402) is an outcome, not a refusal: the attempt's order is recorded.
        if (before && !(res instanceof Error) && res && res.status >= 400 && res.status !== 402) {
          known = await snapshotRows(server.db, options.watchedUsers);
          const changed = changedTables(before, known);
          if (changed.length)
            finding(`refused with ${res.status} but changed ${changed.join(', ')}`, res.status, res.text);
        } else if (write) known = null;
      }
    }
    options.onOperation?.(name, ++done, ordered.length);
  }
  return report;
}

function problemsOf(op: Operation, kase: HostileCase, res: WireResponse, admitted: boolean): string[] {
  const problems: string[] = [];
  if (res.status >= 500) problems.push(`answered ${res.status}`);
  if (res.status >= 400) {
    const type = String(res.headers['content-type'] ?? '');
    if (type.startsWith('text/html') && op.responses[String(res.status)]?.includes('text/html')) {
      // A page the route declares for this status (the checkout pages).
    } else {
      let body: { error?: { code?: unknown; message?: unknown; requestId?: unknown } } | null = null;
      try {
        body = type.includes('application/json') ? JSON.parse(res.text) : null;
      } catch {}
      const error = body?.error;
      if (
        typeof error?.code !== 'string' ||
        typeof error.message !== 'string' ||
        typeof error.requestId !== 'string' ||
        error.requestId !== res.headers['x-request-id']
      ) {
        problems.push(`${res.status} not in the error body {"error":{"code","message","requestId"}}`);
      }
    }
  }
  const expected = kase.expect;
  if (admitted && expected) {
    let code: unknown;
    try {
      code = JSON.parse(res.text)?.error?.code;
    } catch {}
    if (res.status !== expected.status || (expected.code && code !== expected.code)) {
      problems.push(
        `expected ${expected.status}${expected.code ? ` ${expected.code}` : ''}, got ${res.status} ${String(code ?? '')}`,
      );
    }
  }
  return problems;
}

/** A finding as a reproducible request: how to send it again, and what came back. */
export function describeFinding(finding: Finding): string {
  const { request } = finding;
  const body =
    request.body === undefined
      ? ''
      : `\n  body (${Buffer.byteLength(request.body)} bytes): ${JSON.stringify(String(request.body).slice(0, 300))}${
          String(request.body).length > 300 ? '…' : ''
        }`;
  return [
    `${finding.operation} as ${finding.principal} [${finding.operator}, HOSTILE_SEED=${finding.seed}]: ${finding.problem}`,
    `  ${request.method} ${request.path.length > 300 ? `${request.path.slice(0, 300)}… (${request.path.length} chars)` : request.path}${request.omitHost ? ' (no Host header)' : ''}`,
    `  headers: ${JSON.stringify({ ...request.headers, ...(request.headers.authorization ? { authorization: 'Bearer …' } : {}) })}${body}`,
    `  answer: ${finding.status} ${finding.response.slice(0, 300)}`,
  ].join('\n');
}

/**
 * The campaign's cast on a test server: a seller with one of everything (path ids point to its
 * rows, body fields name them), an admin, and an account the admin routes address (so deleting
 * or promoting it leaves the seller alone). Refused requests must leave all three unchanged.
 */
export async function prepareHostileCampaign(
  server: TestServer,
  options: { webhookUrl: string; casesPerOperator: number; seed: number },
): Promise<Omit<CampaignOptions, 'operations'>> {
  const estate = await createSellerEstate(server, { webhookUrl: options.webhookUrl });
  const victim = await signUp(server);
  const adminToken = await server.adminToken();
  const admin = (await server.api.get('/auth/me', { token: adminToken })).expect(200).body.user;
  return {
    principals: [
      { name: 'seller', token: estate.seller.token, meets: ['seller', 'user'] },
      { name: 'admin', token: adminToken, meets: ['seller', 'user', 'admin'] },
    ],
    pathValues: (op) =>
      Object.fromEntries(
        op.pathParams.map((p) => [
          p.name,
          estateIdFor(estate, op.routeUrl, p.name, { userId: victim.user.id }),
        ]),
      ),
    fields: {
      ...estateFields(estate),
      url: options.webhookUrl,
      email: 'hostile-buyer@example.com',
      callback_secret: estate.secrets.callbackSecret,
    },
    watchedUsers: [estate.ids.userId, victim.user.id, admin.id],
    casesPerOperator: options.casesPerOperator,
    seed: options.seed,
    timeoutMs: 10_000,
  };
}
