import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';
import { startTestServer, type TestServer } from '../../../testing/harness.js';
import { registeredRoutes } from '../create-http-app.js';

/**
 * The API reference of both hosts, fetched over HTTP as a client would: valid OpenAPI 3.1, every
 * registered route in it with the auth it requires, and every operation described.
 */

// biome-ignore lint/suspicious/noExplicitAny: the documents are walked generically
type Json = any;

const formatsModule = addFormatsModule as unknown as FormatsPlugin & { default?: FormatsPlugin };
const addFormats: FormatsPlugin = formatsModule.default ?? formatsModule;

let server: TestServer;
const documents: Record<'core' | 'pay', Json> = { core: null, pay: null };

before(async () => {
  server = await startTestServer();
  const core = await server.api.get('/openapi.json');
  documents.core = core.expect(200).body;
  const pay = await server.pay.get('/openapi.json');
  documents.pay = pay.expect(200).body;
});
after(() => server.stop());

const hosts = () =>
  [
    ['core', server.service.core],
    ['pay', server.service.pay],
  ] as const;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace'];

function operations(doc: Json): { key: string; operation: Json }[] {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({
      key: `${method.toUpperCase()} ${path}`,
      operation: item[method],
    })),
  );
}

/** The deliveries a document describes (its `webhooks`), keyed by the event's name. */
function webhookOperations(doc: Json): { key: string; operation: Json }[] {
  return Object.entries((doc.webhooks ?? {}) as Record<string, Json>).map(([name, item]) => ({
    key: `webhook ${name}`,
    operation: item.post,
  }));
}

/** Every Schema Object of a document: parameters, bodies, responses, headers and components. */
function schemas(doc: Json): { where: string; schema: Json }[] {
  const found: { where: string; schema: Json }[] = [];
  for (const { key, operation } of [...operations(doc), ...webhookOperations(doc)]) {
    for (const parameter of operation.parameters ?? [])
      found.push({ where: `${key} parameter ${parameter.name}`, schema: parameter.schema });
    for (const [type, media] of Object.entries<Json>(operation.requestBody?.content ?? {}))
      found.push({ where: `${key} body ${type}`, schema: media.schema });
    for (const [status, response] of Object.entries<Json>(operation.responses ?? {})) {
      for (const [type, media] of Object.entries<Json>(response.content ?? {}))
        found.push({ where: `${key} ${status} ${type}`, schema: media.schema });
      for (const [name, header] of Object.entries<Json>(response.headers ?? {}))
        found.push({ where: `${key} ${status} header ${name}`, schema: header.schema });
    }
  }
  for (const [name, schema] of Object.entries<Json>(doc.components?.schemas ?? {}))
    found.push({ where: `components ${name}`, schema });
  return found;
}

describe('the API reference documents', () => {
  test('both hosts serve a valid OpenAPI 3.1 document', async () => {
    for (const [host, doc] of Object.entries(documents)) {
      const validator = new Validator();
      const result = await validator.validate(structuredClone(doc));
      assert.equal(result.valid, true, `${host}: ${JSON.stringify(result.errors, null, 2)?.slice(0, 3000)}`);
      assert.equal(validator.version, '3.1');
      assert.match(doc.openapi, /^3\.1\./);
    }
    assert.equal(documents.core.servers[0].url, server.config.apiBaseUrl);
    assert.equal(documents.pay.servers[0].url, server.config.payPublicUrl);
    for (const doc of Object.values(documents)) {
      assert.ok(doc.info.license?.name, 'info.license');
      assert.ok(doc.info.contact?.url, 'info.contact');
    }
  });

  test('core paths are relative to {base_url}, as the SDK addresses them; routes at the root name the origin', () => {
    const paths = Object.keys(documents.core.paths);
    assert.ok(paths.includes('/licenses/verify') && paths.includes('/apps/{appId}'));
    assert.deepEqual(
      paths.filter((path) => path.startsWith('/v1')),
      [],
      'no path repeats the version segment of the server',
    );
    const atRoot = operations(documents.core)
      .filter(({ operation }) => operation.servers)
      .map(({ key, operation }) => {
        assert.deepEqual(
          operation.servers.map((entry: Json) => entry.url),
          [server.config.publicOrigin],
        );
        return key;
      });
    assert.deepEqual(atRoot.sort(), [
      'GET /dashboard',
      'GET /dashboard/assets/app.css',
      'GET /dashboard/assets/app.js',
      'GET /docs',
      'GET /favicon.ico',
      'GET /favicon.svg',
      'GET /healthz',
      'GET /readyz',
    ]);
    // The checkout host's routes sit at {pay_url} itself, as the interface addresses them.
    assert.ok(documents.pay.paths['/api/checkout/mirror/validate']?.post);
    assert.ok(operations(documents.pay).every(({ operation }) => !operation.servers));
  });

  test('every schema in them is JSON Schema 2020-12 with no keyword of our own left in', () => {
    // Strict about keywords: an unknown one (our validator's errorMessage, say) fails to compile.
    const ajv = new Ajv2020({ strict: false, strictSchema: true, validateFormats: true });
    addFormats(ajv);
    ajv.addVocabulary(['example', 'discriminator', 'xml', 'externalDocs', 'components']);
    for (const doc of Object.values(documents)) {
      for (const { where, schema } of schemas(doc)) {
        // References point into the document's components, so each schema is compiled with them.
        assert.doesNotThrow(
          () => ajv.compile({ ...structuredClone(schema), components: doc.components }),
          `${where}: ${JSON.stringify(schema)}`,
        );
      }
    }
  });

  test('every route registered on a host is in its document with the auth it requires, and nothing else is', () => {
    for (const [host, app] of hosts()) {
      const doc = documents[host];
      const registered = new Set<string>();
      // The core document's server ends in /v1; the routes outside it keep their full path.
      const prefix = host === 'core' ? '/v1' : '';
      for (const route of registeredRoutes(app)) {
        const relative =
          prefix && route.url.startsWith(`${prefix}/`) ? route.url.slice(prefix.length) : route.url;
        const path = relative.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
        const key = `${route.method} ${path}`;
        registered.add(key);
        const operation = doc.paths[path]?.[route.method.toLowerCase()];
        assert.ok(operation, `${host} ${key} is missing from the document`);
        assert.equal(operation['x-auth'], route.auth, `${host} ${key} x-auth`);
        assert.deepEqual(
          operation.security,
          route.auth === 'public' ? [] : [{ bearer: [] }],
          `${host} ${key} security`,
        );
        // The validator does not check that a named scheme exists; a route needing one must find it.
        for (const requirement of operation.security)
          for (const scheme of Object.keys(requirement))
            assert.ok(doc.components?.securitySchemes?.[scheme], `${host} ${key}: no scheme ${scheme}`);
      }
      for (const { key } of operations(doc)) assert.ok(registered.has(key), `${host} ${key} is not a route`);
    }
    assert.ok(documents.core.components.securitySchemes.bearer.description.includes('ADMIN'));
  });

  test('every operation has a summary, a tag, its successes and the error body for what can fail', () => {
    for (const [host, doc] of Object.entries(documents)) {
      for (const { key, operation } of operations(doc)) {
        const name = `${host} ${key}`;
        assert.ok(operation.summary?.trim(), `${name} has no summary`);
        assert.ok(operation.tags?.length, `${name} has no tag`);
        for (const tag of operation.tags)
          assert.ok(
            doc.tags.find((entry: Json) => entry.name === tag)?.description,
            `${name}: tag ${tag} has no description`,
          );
        assert.ok(operation.operationId, `${name} has no operationId`);
        const statuses = Object.keys(operation.responses);
        assert.ok(
          statuses.some((status) => /^[23]\d\d$/.test(status)),
          `${name} declares no success: ${statuses}`,
        );
        for (const [status, response] of Object.entries<Json>(operation.responses)) {
          assert.ok(response.description, `${name} ${status} has no description`);
          if (/^2\d\d$/.test(status) && status !== '204')
            assert.ok(response.content, `${name} ${status} declares no media type`);
          // Failures answer the error body, listing their codes; a page may answer some as HTML.
          if (/^[45]/.test(status)) {
            assert.ok(response.content, `${name} ${status} declares no media type`);
            const json = response.content['application/json'];
            if (json || !response.content['text/html']) {
              assert.deepEqual(json?.schema?.allOf, [{ $ref: '#/components/schemas/ErrorBody' }]);
              const error = json?.schema?.properties?.error;
              assert.ok(error?.properties?.code?.enum?.length, `${name} ${status} lists no error codes`);
            }
          }
        }
        assert.ok(operation.responses['5XX'], `${name} does not declare 5XX`);
        assert.ok(operation.responses['400'], `${name} does not declare 400`);
        if (operation['x-auth'] !== 'public')
          assert.ok(operation.responses['401'], `${name} does not declare 401`);
        if (key.includes('{')) assert.ok(operation.responses['404'], `${name} does not declare 404`);
      }
    }
  });

  test('the headers the conventions promise are declared: Location, WWW-Authenticate, RateLimit', () => {
    let created = 0;
    let limited = 0;
    for (const [host, doc] of Object.entries(documents)) {
      for (const { key, operation } of operations(doc)) {
        const name = `${host} ${key}`;
        const responses = operation.responses as Record<string, Json>;
        if (responses['201']) {
          created++;
          assert.ok(responses['201'].headers?.location?.schema, `${name} 201 declares Location`);
        }
        if (responses['401'])
          assert.match(
            responses['401'].headers?.['www-authenticate']?.description ?? '',
            /Bearer|Password|CallbackSecret|Cookie/,
            `${name} 401 declares its challenge`,
          );
        const codes429 =
          responses['429']?.content?.['application/json']?.schema?.properties?.error?.properties?.code?.enum;
        if (!codes429?.includes('rate_limited')) continue;
        limited++;
        for (const status of Object.keys(responses).filter((s) => /^2\d\d$|^429$/.test(s))) {
          for (const header of ['ratelimit', 'ratelimit-policy', 'x-ratelimit-remaining'])
            assert.ok(responses[status].headers?.[header], `${name} ${status} declares ${header}`);
        }
      }
    }
    assert.ok(created >= 9 && limited >= 15, `${created} creating and ${limited} limited operations`);
    assert.match(
      documents.core.paths['/licenses/verify'].post.responses['200'].headers.ratelimit.description,
      /draft-ietf-httpapi-ratelimit-headers-11/,
    );
  });

  test('admin and user-token routes say what they need, in words and in their 403', () => {
    const users = documents.core.paths['/admin/users'].get;
    assert.match(users.description, /ADMIN role/);
    assert.deepEqual(
      users.responses['403'].content['application/json'].schema.properties.error.properties.code.enum,
      ['forbidden'],
    );
    const keys = documents.core.paths['/apps/{appId}/api-keys'].post;
    assert.match(keys.description, /user token only/);
    assert.ok(
      keys.responses['403'].content['application/json'].schema.properties.error.properties.code.enum.includes(
        'user_token_required',
      ),
    );
  });

  test('request shapes come from the validating schemas, with our error messages as descriptions', () => {
    const create = documents.core.paths['/products'].post;
    const body = create.requestBody.content['application/json'].schema;
    assert.equal(body.additionalProperties, false);
    assert.ok(body.required.includes('name'));
    assert.match(
      body.properties.successUrl.description ?? JSON.stringify(body.properties.successUrl),
      /http/,
    );
    const list = documents.core.paths['/products'].get;
    const limit = list.parameters.find((parameter: Json) => parameter.name === 'limit');
    assert.equal(limit.in, 'query');
    assert.equal(limit.schema.maximum, 100);
    assert.equal(limit.required ?? false, false, 'a default means a client may leave it out');
    assert.equal(limit.schema.default, 20);
  });

  test('failures share one error body and narrow its code, which a response is checked against', () => {
    const ajv = new Ajv2020({ strict: false });
    ajv.addVocabulary(['example', 'components']);
    const remove = documents.core.paths['/products/{id}'].delete.responses;
    const conflict = remove['409'].content['application/json'].schema;
    const validate = ajv.compile({ ...conflict, components: documents.core.components });
    const body = (code: string) => ({ error: { code, message: 'm', requestId: 'r' } });
    assert.equal(validate(body('product_in_use')), true);
    assert.equal(validate(body('not_found')), false, 'a code the status does not answer');
    assert.equal(validate({ error: { code: 'product_in_use', message: 'm' } }), false, 'requestId');
    for (const doc of Object.values(documents))
      assert.doesNotMatch(
        JSON.stringify(doc.paths),
        /"requestId"/,
        'the body is described once, in components',
      );
  });

  test('the core document describes, in its webhooks, every event an endpoint can subscribe to', () => {
    const create = documents.core.paths['/webhooks'].post.requestBody.content['application/json'].schema;
    const subscribable: string[] = create.properties.events.items.enum;
    assert.ok(subscribable.includes('order.paid') && subscribable.includes('license.created'));
    assert.deepEqual(Object.keys(documents.core.webhooks), subscribable);
    assert.equal(documents.pay.webhooks, undefined, 'the checkout host sends no core events');
    for (const { key, operation } of webhookOperations(documents.core)) {
      const name = key.replace('webhook ', '');
      assert.ok(operation.summary?.trim(), `${key} has no summary`);
      assert.ok(
        documents.core.tags.find((tag: Json) => tag.name === operation.tags[0])?.description,
        `${key}: tag`,
      );
      const envelope = operation.requestBody.content['application/json'].schema;
      assert.deepEqual(envelope.required.sort(), ['data', 'id', 'signature', 'timestamp', 'type']);
      assert.equal(envelope.properties.type.const, name);
      assert.equal(envelope.properties.data.type, 'object', `${key}: data is described`);
      assert.ok(Object.keys(envelope.properties.data.properties).length > 0);
      assert.deepEqual(
        operation.parameters.map((parameter: Json) => parameter.name),
        [
          'webhook-id',
          'webhook-timestamp',
          'webhook-signature',
          'X-Webhook-Id',
          'X-Webhook-Timestamp',
          'X-Webhook-Signature',
        ],
      );
    }
    // The shared payloads of the sale and the subscription, as a receiver's generated types see them.
    const data = (name: string) =>
      documents.core.webhooks[name].post.requestBody.content['application/json'].schema.properties.data;
    assert.equal(data('order.paid').properties.status.const, 'paid');
    assert.deepEqual(data('dispute.closed').properties.status.enum, ['won', 'lost']);
    assert.ok(!('token' in data('order.paid').properties), 'no strict-mode token on the seller’s events');
  });

  test('no request field with a default is required of the client', () => {
    for (const [host, doc] of Object.entries(documents)) {
      for (const { key, operation } of operations(doc)) {
        for (const parameter of operation.parameters ?? []) {
          if (parameter.schema?.default !== undefined)
            assert.ok(!parameter.required, `${host} ${key}: ${parameter.name} has a default but is required`);
        }
        const body = operation.requestBody?.content?.['application/json']?.schema;
        for (const name of body?.required ?? [])
          assert.equal(body.properties?.[name]?.default, undefined, `${host} ${key}: body ${name}`);
      }
    }
    const series = documents.core.paths['/analytics/licenses'].get.parameters;
    const interval = series.find((parameter: Json) => parameter.name === 'interval');
    assert.deepEqual([interval.required ?? false, interval.schema.default], [false, 'day']);
  });
});
