import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString, type OpenAPI3 } from 'openapi-typescript';
import ts from 'typescript';
import { startTestServer, type TestServer, uniqueSuffix } from '../../../testing/harness.js';

/**
 * A client generated from the served documents just works: openapi-typescript turns each document
 * into types, a small program written against them with openapi-fetch type-checks (and a call
 * the API does not have does not), and the same program, given the base URL the SDK takes
 * (`<origin>/v1`), signs up, creates an app and a license, and verifies the key.
 */

const ARTIFACTS = fileURLToPath(new URL('../../../../artifacts/', import.meta.url));

/** Written against the generated types, as a seller's integration would be. */
const CORE_PROGRAM = `import createClient from 'openapi-fetch';
import type { paths, webhooks } from './core-api.js';

/** What a webhook endpoint receives for an event kind: the document's webhooks, typed. */
type Delivered<T extends keyof webhooks> = NonNullable<
  NonNullable<webhooks[T]['post']>['requestBody']
>['content']['application/json'];

export function describeSale(event: Delivered<'order.paid'>): string {
  const status: 'paid' = event.data.status;
  return \`\${event.type} \${status}: \${event.data.amount} \${event.data.currency} from \${event.data.email}\`;
}

export async function run(baseUrl: string, email: string) {
  const client = createClient<paths>({ baseUrl });
  const health = await client.GET('/health');
  const registered = await client.POST('/auth/register', {
    body: { email, password: 'correct horse battery' },
  });
  if (!registered.data) throw new Error('register failed');
  const headers = { authorization: \`Bearer \${registered.data.token}\` };
  const app = await client.POST('/apps', { body: { name: 'Generated client' }, headers });
  if (!app.data) throw new Error('app failed');
  const license = await client.POST('/apps/{appId}/licenses', {
    params: { path: { appId: app.data.id } },
    body: {},
    headers,
  });
  if (!license.data) throw new Error('license failed');
  const verified = await client.POST('/licenses/verify', { body: { key: license.data.key } });
  const refused = await client.GET('/apps/{appId}', { params: { path: { appId: app.data.id } } });
  return {
    health: health.data?.status,
    appName: app.data.name,
    valid: verified.data?.valid,
    refused: { status: refused.response.status, code: refused.error?.error.code },
  };
}

export function misuses(client: ReturnType<typeof createClient<paths>>) {
  // @ts-expect-error the version segment is part of the base URL, never of a path
  void client.GET('/v1/health');
  // @ts-expect-error verify needs the key
  void client.POST('/licenses/verify', { body: {} });
}

export function misreads(event: Delivered<'order.paid'>, dispute: Delivered<'dispute.closed'>) {
  // @ts-expect-error a sale's event carries no card
  void event.data.card;
  // @ts-expect-error a closed dispute was won or lost
  const open: 'needs_response' = dispute.data.status;
  void open;
}
`;

const PAY_PROGRAM = `import createClient from 'openapi-fetch';
import type { paths } from './pay-api.js';

export async function run(baseUrl: string) {
  const client = createClient<paths>({ baseUrl });
  const ready = await client.GET('/health/ready');
  const validated = await client.POST('/api/checkout/mirror/validate', {
    body: { license: 'LIC-NOT-A-KEY', email: 'buyer@example.com' },
  });
  return { ready: ready.data?.status, status: validated.response.status, success: validated.data?.success };
}
`;

let server: TestServer;
let folder: string;

before(async () => {
  server = await startTestServer();
  await mkdir(ARTIFACTS, { recursive: true });
  // Inside the repository, so the generated program resolves openapi-fetch from node_modules.
  folder = await mkdtemp(path.join(ARTIFACTS, 'generated-client-'));
});
after(async () => {
  await server.stop();
  if (folder) await rm(folder, { recursive: true, force: true });
});

/** Generates types from a served document with openapi-typescript. */
async function generate(documentUrl: string, file: string): Promise<string> {
  const document = (await (await fetch(documentUrl)).json()) as OpenAPI3;
  const source = astToString(await openapiTS(document, { silent: true }));
  await writeFile(path.join(folder, file), source);
  return source;
}

/** Type-checks programs as a strict TypeScript project would; answers the diagnostics. */
function typeCheck(files: string[]): string[] {
  const program = ts.createProgram(
    files.map((file) => path.join(folder, file)),
    {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      skipLibCheck: true,
      types: [],
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    },
  );
  return ts
    .getPreEmitDiagnostics(program)
    .map((diagnostic) => ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n'));
}

/**
 * Runs a program as a seller would after their build: compiled to JavaScript by TypeScript, then
 * imported (the suite itself runs compiled, with no TypeScript loader).
 */
async function importProgram(name: string) {
  const source = await readFile(path.join(folder, name), 'utf8');
  const { outputText } = ts.transpileModule(source, {
    compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 },
  });
  const compiled = path.join(folder, name.replace(/\.ts$/, '.mjs'));
  await writeFile(compiled, outputText);
  return import(pathToFileURL(compiled).href);
}

describe('a client generated from the OpenAPI documents', () => {
  test('types generate from both documents and a program written against them type-checks', async () => {
    const core = await generate(`${server.service.coreUrl}/v1/openapi.json`, 'core-api.d.ts');
    const pay = await generate(`${server.service.payUrl}/openapi.json`, 'pay-api.d.ts');
    assert.match(core, /"\/licenses\/verify": \{/);
    assert.match(core, /export interface webhooks \{/, 'the events a seller’s endpoint receives are typed');
    assert.doesNotMatch(core, /"\/v1\//, 'core paths are relative to {base_url}');
    assert.match(pay, /"\/api\/checkout\/mirror\/validate": \{/);
    await writeFile(path.join(folder, 'core-program.ts'), CORE_PROGRAM);
    await writeFile(path.join(folder, 'pay-program.ts'), PAY_PROGRAM);
    // The @ts-expect-error lines must each be an error, so a loose type fails this too.
    assert.deepEqual(typeCheck(['core-program.ts', 'pay-program.ts']), []);
  });

  test('with the base URL the SDK takes, it calls the core API and the checkout host', async () => {
    const core = await importProgram('core-program.ts');
    // {base_url}: what the SDK's client is given (the test server listens on a port of its own).
    const baseUrl = `${server.service.coreUrl}/v1`;
    const result = await core.run(baseUrl, `generated-${uniqueSuffix()}@test.example`);
    assert.deepEqual(result, {
      health: 'ok',
      appName: 'Generated client',
      valid: true,
      refused: { status: 401, code: 'unauthorized' },
    });
    const pay = await importProgram('pay-program.ts');
    const answer = await pay.run(server.service.payUrl);
    assert.equal(answer.ready, 'ready');
    // {pay_url}: the checkout routes are addressed from it, as the interface writes them. An
    // unknown license is a business outcome (200, success false), not an error.
    assert.deepEqual(answer, { ready: 'ready', status: 200, success: false });
  });
});
