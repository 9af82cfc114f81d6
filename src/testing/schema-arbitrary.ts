import { randomUUID } from 'node:crypto';
import fc from 'fast-check';

/** The part of JSON Schema 2020-12 our request schemas use (TypeBox output, as the documents show it). */
export interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  format?: string;
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  minProperties?: number;
  maxProperties?: number;
  default?: unknown;
}

/** Values for fields by name (an owned id for `appId`, say), used instead of generated ones. */
export type FieldValues = Record<string, unknown>;

const typesOf = (schema: JsonSchema): string[] => [schema.type ?? []].flat();

/**
 * Values the schema accepts, biased to its edges: lengths and numbers at their bounds, any
 * Unicode, the last and first representable dates and leap seconds (`23:59:60Z`, which the
 * date-time format allows and JavaScript's Date does not). `fields` pins named fields.
 */
export function validArbitrary(
  schema: JsonSchema,
  fields: Record<string, fc.Arbitrary<unknown>> = {},
  name?: string,
): fc.Arbitrary<unknown> {
  const pinned = name === undefined ? undefined : fields[name];
  if (pinned) return pinned;
  if ('const' in schema) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return fc.oneof(...variants.map((variant) => validArbitrary(variant, fields, name)));
  if (schema.allOf) return validArbitrary(Object.assign({}, ...schema.allOf), fields, name);
  const types = typesOf(schema);
  if (types.length > 1)
    return fc.oneof(...types.map((type) => validArbitrary({ ...schema, type }, fields, name)));
  switch (types[0]) {
    case 'null':
      return fc.constant(null);
    case 'boolean':
      return fc.boolean();
    case 'integer':
      return fc.integer({
        min: schema.minimum ?? (schema.exclusiveMinimum ?? -(2 ** 31)) + 1,
        max: schema.maximum ?? (schema.exclusiveMaximum ?? 2 ** 31) - 1,
      });
    case 'number':
      return fc.double({
        min: schema.minimum ?? schema.exclusiveMinimum ?? -1e12,
        max: schema.maximum ?? schema.exclusiveMaximum ?? 1e12,
        minExcluded: schema.exclusiveMinimum !== undefined,
        maxExcluded: schema.exclusiveMaximum !== undefined,
        noNaN: true,
        noDefaultInfinity: true,
      });
    case 'string':
      return stringArbitrary(schema);
    case 'array':
      return arrayArbitrary(schema, fields);
    case 'object':
      return objectArbitrary(schema, fields);
    default:
      return fc.jsonValue({ maxDepth: 3 });
  }
}

function withinLength(schema: JsonSchema) {
  return (text: string) =>
    [...text].length >= (schema.minLength ?? 0) && [...text].length <= (schema.maxLength ?? Infinity);
}

const isoDate = (date: Date) => date.toISOString();
const anyDate = fc.date({
  min: new Date('0001-01-01T00:00:00Z'),
  max: new Date('9999-12-31T23:59:59.999Z'),
  noInvalidDate: true,
});

/** RFC 3339 date-times, including leap seconds, offsets and the ends of the four-digit years. */
export const dateTimeArbitrary: fc.Arbitrary<string> = fc.oneof(
  anyDate.map(isoDate),
  anyDate.map((date) => `${isoDate(date).slice(0, 10)}T23:59:60Z`),
  fc.tuple(anyDate, fc.integer({ min: -14 * 60, max: 14 * 60 })).map(([date, offset]) => {
    const sign = offset < 0 ? '-' : '+';
    const minutes = Math.abs(offset);
    const hh = String(Math.floor(minutes / 60)).padStart(2, '0');
    const mm = String(minutes % 60).padStart(2, '0');
    return `${isoDate(date).slice(0, 19)}${sign}${hh}:${mm}`;
  }),
);

/** Any Unicode scalar value, control characters and NUL included (fast-check's 'binary' unit is slow). */
const anyCodePoint = fc
  .integer({ min: 0, max: 0x10ffff })
  .filter((code) => code < 0xd800 || code > 0xdfff)
  .map((code) => String.fromCodePoint(code));

function stringArbitrary(schema: JsonSchema): fc.Arbitrary<string> {
  const fits = withinLength(schema);
  const pattern = schema.pattern ? new RegExp(schema.pattern) : null;
  const matches = (text: string) => fits(text) && (!pattern || pattern.test(text));
  switch (schema.format) {
    case 'uuid':
      return fc.uuid();
    case 'email':
      return fc.emailAddress().filter(matches);
    case 'uri':
      return fc.webUrl({ withQueryParameters: true, withFragments: true }).filter(matches);
    case 'date-time':
      return dateTimeArbitrary;
  }
  if (pattern) return fc.stringMatching(boundedPattern(schema) ?? pattern).filter(matches);
  const minLength = schema.minLength ?? 0;
  const maxLength = Math.min(schema.maxLength ?? 1000, 100_000);
  const units = ['grapheme', anyCodePoint, 'grapheme-ascii'] as const;
  return fc.oneof(
    // Random Unicode is slow to make at length; the longest case is the ASCII one below.
    ...units.map((unit) =>
      fc.string({ unit, minLength, maxLength: Math.max(minLength, Math.min(maxLength, 300)) }).filter(fits),
    ),
    // Exactly at the longest allowed.
    fc.string({ unit: 'grapheme-ascii', minLength: maxLength, maxLength }),
  );
}

/**
 * `^[class]+$` with a minLength is rewritten `^[class]{min,max}$`: the generator would otherwise
 * make short strings the length bounds then throw away, for ever.
 */
function boundedPattern(schema: JsonSchema): RegExp | null {
  const simple = /^\^(\[[^\]]+\])[+*]\$$/.exec(schema.pattern ?? '');
  if (!simple || (schema.minLength === undefined && schema.maxLength === undefined)) return null;
  return new RegExp(`^${simple[1]}{${schema.minLength ?? 0},${schema.maxLength ?? ''}}$`);
}

function arrayArbitrary(schema: JsonSchema, fields: Record<string, fc.Arbitrary<unknown>>) {
  const items = validArbitrary(schema.items ?? {}, fields);
  const bounds = { minLength: schema.minItems ?? 0, maxLength: Math.min(schema.maxItems ?? 20, 500) };
  return schema.uniqueItems
    ? fc.uniqueArray(items, { ...bounds, selector: (item) => JSON.stringify(item) })
    : fc.array(items, bounds);
}

function objectArbitrary(schema: JsonSchema, fields: Record<string, fc.Arbitrary<unknown>>) {
  const properties = schema.properties ?? {};
  const model = Object.fromEntries(
    Object.entries(properties).map(([key, child]) => [key, validArbitrary(child, fields, key)]),
  );
  const known = fc.record(model, {
    requiredKeys: (schema.required ?? []).filter((key) => key in properties),
  });
  const open = schema.additionalProperties !== undefined && schema.additionalProperties !== false;
  const extras = open
    ? fc.dictionary(
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).filter((key) => !(key in properties)),
        fc.jsonValue({ maxDepth: 3 }),
        { maxKeys: 8 },
      )
    : fc.constant({});
  return fc
    .tuple(known, extras)
    .map(([value, more]) => ({ ...more, ...value }) as Record<string, unknown>)
    .filter(
      (value) =>
        Object.keys(value).length >= (schema.minProperties ?? 0) &&
        Object.keys(value).length <= (schema.maxProperties ?? Infinity),
    );
}

/**
 * One plain value the schema accepts, the same every time: required fields only (plus the first
 * optional ones a minProperties asks for; every field with `everyField`), the shortest text, the
 * lowest number. `fields` pins named fields. What a well-behaved client would send; no edges.
 */
export function plausibleValue(
  schema: JsonSchema,
  fields: FieldValues = {},
  name?: string,
  options: { everyField?: boolean } = {},
): unknown {
  if (name !== undefined && name in fields) return fields[name];
  if ('const' in schema) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (schema.enum) return schema.enum[0];
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) {
    const first = variants.find((variant) => !typesOf(variant).includes('null')) ?? variants[0] ?? {};
    return plausibleValue(first, fields, name, options);
  }
  if (schema.allOf) return plausibleValue(Object.assign({}, ...schema.allOf), fields, name, options);
  const type = typesOf(schema).find((candidate) => candidate !== 'null') ?? typesOf(schema)[0];
  switch (type) {
    case 'null':
      return null;
    case 'boolean':
      return true;
    case 'integer':
    case 'number':
      return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1);
    case 'string':
      return plausibleText(schema);
    case 'array':
      return Array.from({ length: Math.max(schema.minItems ?? 1, 1) }, () =>
        plausibleValue(schema.items ?? {}, fields, undefined, options),
      ).slice(0, schema.uniqueItems ? 1 : undefined);
    case 'object': {
      const properties = schema.properties ?? {};
      const required = new Set(schema.required ?? []);
      const optional = Object.keys(properties).filter((key) => !required.has(key));
      const wanted = options.everyField
        ? optional.length
        : Math.max((schema.minProperties ?? 0) - required.size, 0);
      const keys = [...required, ...optional.slice(0, wanted)];
      return Object.fromEntries(
        keys.map((key) => [key, plausibleValue(properties[key] ?? {}, fields, key, options)]),
      );
    }
    default:
      return {};
  }
}

function plausibleText(schema: JsonSchema): string {
  switch (schema.format) {
    case 'uuid':
      return randomUUID();
    case 'email':
      return 'someone@example.com';
    case 'uri':
      return 'https://example.com/x';
    case 'date-time':
      return new Date(Date.now() + 86_400_000).toISOString();
  }
  if (schema.pattern) {
    const pattern = new RegExp(schema.pattern);
    const fits = withinLength(schema);
    const found = fc
      .sample(fc.stringMatching(pattern), { seed: 7, numRuns: 200 })
      .find((text) => fits(text) && pattern.test(text));
    if (found !== undefined) return found;
  }
  return 'x'.repeat(Math.max(schema.minLength ?? 1, 1));
}

/** The JSON types a schema allows at its top (empty: any). */
export function allowedTypes(schema: JsonSchema): string[] {
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return variants.flatMap(allowedTypes);
  if ('const' in schema || schema.enum) return [];
  return typesOf(schema);
}

/** The JSON type of a value in schema words (`integer` for whole numbers). */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}
