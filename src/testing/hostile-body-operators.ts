import fc from 'fast-check';
import { DEFAULT_BODY_LIMIT } from '../platform/http/create-http-app.js';
import {
  bad,
  baseRequest,
  type CaseContext,
  type HostileCase,
  JSON_TYPE,
  type Operator,
  withLoneSurrogate,
  withNul,
} from './hostile-case.js';
import { allowedTypes, type JsonSchema, jsonTypeOf, validArbitrary } from './schema-arbitrary.js';

/** Any JSON value without `__proto__` or `constructor` keys, which the parser refuses as invalid_json on purpose. */
const plainJson = (maxDepth: number) =>
  fc.jsonValue({ maxDepth }).filter((value) => !/"(__proto__|constructor)":/.test(JSON.stringify(value)));
const SENTINEL = '"\u{1F9EA}raw\u{1F9EA}"';

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

const jsonBody = (ctx: CaseContext) => ctx.op.body?.mediaType === JSON_TYPE && ctx.body !== undefined;
const jsonCase = (ctx: CaseContext, operator: string, text: string, expect?: HostileCase['expect']) => ({
  operator,
  request: baseRequest(ctx, { body: text, headers: { 'content-type': JSON_TYPE } }),
  ...(expect ? { expect } : {}),
});

/** JSON bodies: schema-valid edges, and every way a body can be wrong. */
export const jsonOperators: Operator[] = [
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
