import fc from 'fast-check';
import type { Parameter } from './api-operations.js';
import {
  asciiText,
  bad,
  baseRequest,
  type CaseContext,
  type HostileCase,
  type Operator,
  pathOf,
  queryOf,
  withLoneSurrogate,
  withNul,
} from './hostile-case.js';
import { allowedTypes, dateTimeArbitrary, validArbitrary } from './schema-arbitrary.js';

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
export const pathOperators: Operator[] = [
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
export const queryOperators: Operator[] = [
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
