import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import Type from 'typebox';
import { ConfigError, parseConfig } from '../config.js';
import { createLog } from '../log.js';
import { createHttpApp, type HttpApp } from './create-http-app.js';
import type { ResponseContractMode } from './response-contract.js';
import { noContent } from './responses.js';
import { textResponse } from './schemas.js';

/**
 * The response contract check on a throwaway app: routes that keep their declared shape pass,
 * routes that drift answer 500 and log the violation (enforce), or only log it (log).
 */

const Widget = Type.Object({ id: Type.String({ format: 'uuid' }), count: Type.Integer() });
const WIDGET = { id: '0b7c1f0e-6d1a-4c39-9d0a-8f1f3f6b2a11', count: 3 };

async function throwawayApp(mode: ResponseContractMode) {
  const lines: string[] = [];
  const log = createLog({ logLevel: 'info' }, { write: (line: string) => void lines.push(line) });
  const app: HttpApp = createHttpApp({ log, responseContract: mode });
  app.get('/right', {
    config: { auth: 'public' },
    schema: { response: { 200: Widget } },
    handler: async () => WIDGET,
  });
  app.get('/wrong-type', {
    config: { auth: 'public' },
    schema: { response: { 200: Widget } },
    // The serializer would quietly turn "3" into 3; the check must not.
    handler: async () => ({ ...WIDGET, count: '3' }) as never,
  });
  app.get('/missing-field', {
    config: { auth: 'public' },
    schema: { response: { 200: Widget } },
    handler: async () => ({ id: WIDGET.id }) as never,
  });
  app.post('/undeclared-status', {
    config: { auth: 'public' },
    schema: { response: { 200: Widget } },
    handler: async (_request, reply) => reply.status(201 as never).send(WIDGET as never),
  });
  app.delete('/empty', {
    config: { auth: 'public' },
    schema: { response: { 204: noContent('Gone') } },
    handler: async (_request, reply) => reply.status(204).send(),
  });
  app.get('/page', {
    config: { auth: 'public' },
    schema: { response: { 200: textResponse('text/html', 'A page') } },
    handler: async (_request, reply) =>
      reply.header('content-type', 'text/html; charset=utf-8').send('<p>hi</p>'),
  });
  app.get('/page-as-text', {
    config: { auth: 'public' },
    schema: { response: { 200: textResponse('text/html', 'A page') } },
    handler: async (_request, reply) => reply.header('content-type', 'text/plain').send('hi'),
  });
  app.get('/hand-written-json', {
    config: { auth: 'public' },
    schema: { response: { 200: Widget } },
    handler: async (_request, reply) =>
      reply
        .header('content-type', 'application/json')
        .send(JSON.stringify({ id: 'nope', count: 1 }) as never),
  });
  app.get('/undeclared-error-code', {
    config: { auth: 'public' },
    schema: { response: { 200: Widget } },
    handler: async (_request, reply) =>
      reply.status(400 as never).send({ error: { code: 'conflict', message: 'x', requestId: 'r' } } as never),
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const violations = () =>
    lines.map((line) => JSON.parse(line)).filter((entry) => entry.msg === 'http.response.contract_violation');
  return { app, base, violations };
}

describe('the response contract check (enforce)', () => {
  let server: Awaited<ReturnType<typeof throwawayApp>>;
  before(async () => {
    server = await throwawayApp('enforce');
  });
  after(() => server.app.close());

  const get = (path: string, method = 'GET') => fetch(server.base + path, { method });

  test('a response of the declared shape passes untouched and logs nothing', async () => {
    const res = await get('/right');
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), WIDGET);
    assert.equal((await get('/empty', 'DELETE')).status, 204);
    const page = await get('/page');
    assert.equal(page.status, 200);
    assert.equal(await page.text(), '<p>hi</p>');
    assert.deepEqual(server.violations(), []);
  });

  test('a wrong type answers 500 in the error body and logs the route, status and path', async () => {
    const res = await get('/wrong-type');
    assert.equal(res.status, 500);
    const body = (await res.json()) as { error: { code: string; requestId: string } };
    assert.equal(body.error.code, 'internal_error');
    assert.equal(body.error.requestId, res.headers.get('x-request-id'));
    const logged = server.violations().find((entry) => entry.route === 'GET /wrong-type');
    assert.ok(logged, 'the violation is logged');
    assert.equal(logged.status, 200);
    assert.equal(logged.requestId, res.headers.get('x-request-id'));
    assert.deepEqual(
      logged.errors.map((error: { path: string }) => error.path),
      ['/count'],
    );
  });

  test('a missing field, an undeclared status and an error code the status does not list are violations', async () => {
    assert.equal((await get('/missing-field')).status, 500);
    assert.equal((await get('/undeclared-status', 'POST')).status, 500);
    assert.equal((await get('/undeclared-error-code')).status, 500);
    const routes = server.violations().map((entry) => `${entry.route} ${entry.status}`);
    assert.ok(routes.includes('GET /missing-field 200'));
    assert.ok(routes.includes('POST /undeclared-status 201'));
    assert.ok(routes.includes('GET /undeclared-error-code 400'));
  });

  test('a page sent with another media type, and hand-written JSON of the wrong shape, are violations', async () => {
    assert.equal((await get('/page-as-text')).status, 500);
    assert.equal((await get('/hand-written-json')).status, 500);
    const problems = server.violations().map((entry) => `${entry.route}: ${entry.problem}`);
    assert.ok(problems.includes('GET /page-as-text: media type text/plain is not declared'));
    assert.ok(problems.includes('GET /hand-written-json: the body does not match the declared schema'));
  });

  test('the errors every route can answer are declared for it, so they pass', async () => {
    const res = await fetch(`${server.base}/right?x=%00`);
    assert.equal(res.status, 400);
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'validation_failed');
    assert.equal(server.violations().filter((entry) => entry.route === 'GET /right').length, 0);
  });
});

describe('the response contract check (log)', () => {
  test('a violation is logged and the response goes out unchanged', async () => {
    const server = await throwawayApp('log');
    try {
      const res = await fetch(`${server.base}/wrong-type`);
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { ...WIDGET, count: 3 });
      assert.equal(server.violations().length, 1);
    } finally {
      await server.app.close();
    }
  });
});

describe('the RESPONSE_CONTRACT setting', () => {
  test('is off in production, enforced in tests, and refuses other values naming the variable', () => {
    assert.equal(parseConfig({ NODE_ENV: 'production' }).responseContract, 'off');
    assert.equal(parseConfig({ NODE_ENV: 'test' }).responseContract, 'enforce');
    assert.equal(parseConfig({ NODE_ENV: 'production', RESPONSE_CONTRACT: 'log' }).responseContract, 'log');
    assert.throws(
      () => parseConfig({ RESPONSE_CONTRACT: 'strict' }),
      (error: unknown) => error instanceof ConfigError && error.variable === 'RESPONSE_CONTRACT',
    );
  });
});
