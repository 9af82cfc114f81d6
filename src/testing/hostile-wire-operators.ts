import fc from 'fast-check';
import {
  asciiText,
  bad,
  baseRequest,
  type CaseContext,
  encodeBody,
  FORM_TYPE,
  type Operator,
} from './hostile-case.js';
import { validArbitrary } from './schema-arbitrary.js';

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
export const wireOperators: Operator[] = [
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
