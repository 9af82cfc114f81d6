import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import ts from 'typescript';
import { PGLITE_PASS_ONLY } from '../../../src/testing/store-pass.js';

/**
 * The package as a user gets it: `npm pack` (which builds dist on prepack), installed from the
 * tarball into a scratch project outside this repository, then used from plain ESM and CommonJS
 * scripts and type-checked with TypeScript, README examples included. The install is offline:
 * jose, the one dependency, is packed from this repository's node_modules beside it.
 */
const run = promisify(execFile);
// The folders themselves, also when this file runs from the suite's compiled mirror (dist-test),
// where each file is a link back to its source.
const folderOf = (file: string) => dirname(realpathSync(fileURLToPath(new URL(file, import.meta.url))));
const PACKAGE = folderOf('../package.json');
const ROOT = folderOf('../../../package.json');
const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const README = join(PACKAGE, 'README.md');

let work: string;
let scratch: string;
let tarball: string;
let packed: string[];
/** A token and the stored key set that checks it, made here as the service would. */
let sample: { token: string; keySet: unknown; appId: string };

// Under `npm test`, npm_config_local_prefix (and the like) would point npm back at this
// repository: the scratch project's npm must see only its own folder.
const ownEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
const npm = (args: string[], cwd: string) =>
  run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], {
    cwd,
    env: ownEnv,
    maxBuffer: 16 * 1024 * 1024,
  });

before(async () => {
  if (PGLITE_PASS_ONLY) return;
  work = await mkdtemp(join(tmpdir(), 'sdk-pack-'));
  scratch = join(work, 'project');
  await mkdir(scratch);
  const { stdout } = await npm(['pack', '--json', '--pack-destination', work], PACKAGE);
  const [result] = JSON.parse(stdout.slice(stdout.indexOf('[\n'))) as {
    filename: string;
    files: { path: string }[];
  }[];
  assert.ok(result);
  tarball = join(work, result.filename);
  packed = result.files.map((file) => file.path);
  await npm(['pack', '--ignore-scripts', '--pack-destination', work], join(ROOT, 'node_modules/jose'));
  const jose = JSON.parse(await readFile(join(ROOT, 'node_modules/jose/package.json'), 'utf8')).version;
  await writeFile(
    join(scratch, 'package.json'),
    JSON.stringify({ name: 'scratch', private: true, type: 'module' }),
  );
  await npm(['install', '--offline', tarball, join(work, `jose-${jose}.tgz`)], scratch);

  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
  const appId = 'app-0001';
  sample = {
    appId,
    keySet: { keys: [{ ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] },
    token: await new SignJWT({ token_use: 'service_license_v1', plan: 'pro' })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setSubject('lic-1')
      .setAudience(appId)
      .setJti('jti-1')
      .setIssuedAt()
      .setExpirationTime('15m')
      .sign(privateKey),
  };
});
after(() => (work ? rm(work, { recursive: true, force: true }) : undefined));

const ROOT_EXPORTS = [
  'ArtifactVerificationError',
  'CheckoutClient',
  'LICENSE_FILE_USE',
  'LicenseFileError',
  'LicenseTokenError',
  'LicenseTokenVerifier',
  'LicensingApiError',
  'LicensingClient',
  'RELEASE_MANIFEST_USE',
  'REVOCATION_LIST_USE',
  'canonicalLicenseKey',
  'checkRevocations',
  'createOfflineActivationRequest',
  'fetchKeySet',
  'responseInfo',
  'verifyArtifact',
  'verifyLicenseFile',
];
const SERVER_EXPORTS = [
  ...ROOT_EXPORTS,
  'MirrorRedirectError',
  'WebhookVerificationError',
  'fingerprintOf',
  'machineFingerprint',
  'readMirrorRedirect',
  'sealMirrorPayload',
  'verifyMerchantWebhook',
  'verifyMirrorRedirect',
  'verifyWebhook',
].sort();

/** What each script prints: the exports it saw and what an offline check and a webhook gave. */
const SCRIPT_BODY = `
const { token, keySet, appId, webhook } = JSON.parse(process.env.SDK_SAMPLE);
const claims = await new root.LicenseTokenVerifier({ appId, keySet }).verify(token);
const refused = await new root.LicenseTokenVerifier({ appId: 'another-app', keySet })
  .verify(token)
  .then(() => 'accepted', (error) => error instanceof root.LicenseTokenError && error.code);
const envelope = server.verifyWebhook({ secret: webhook.secret, body: webhook.body, signature: webhook.signature, timestamp: webhook.timestamp });
let misuse;
try { server.verifyWebhook(webhook.body, webhook.signature, webhook.secret); } catch (error) { misuse = error.message; }
console.log(JSON.stringify({
  root: Object.keys(root).sort(),
  server: Object.keys(server).sort(),
  sameClasses: root.LicensingApiError === server.LicensingApiError,
  sub: claims.sub,
  plan: claims.plan,
  refused,
  webhook: envelope.type,
  misuse,
}));
`;

async function runScript(name: string, source: string): Promise<Record<string, unknown>> {
  await writeFile(join(scratch, name), source);
  const secret = 'whsec_test';
  const body = JSON.stringify({
    id: 'evt-1',
    type: 'license.created',
    data: {},
    timestamp: '',
    signature: '',
  });
  const timestamp = String(Math.floor(Date.now() / 1000));
  const signature = `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
  const { stdout } = await run(process.execPath, [name], {
    cwd: scratch,
    env: {
      ...process.env,
      SDK_SAMPLE: JSON.stringify({ ...sample, webhook: { secret, body, timestamp, signature } }),
    },
  });
  return JSON.parse(stdout);
}

const expectedRun = {
  root: ROOT_EXPORTS,
  server: SERVER_EXPORTS,
  sameClasses: true,
  sub: 'lic-1',
  plan: 'pro',
  refused: 'wrong_audience',
  webhook: 'license.created',
  misuse:
    'verifyWebhook({ secret, body, signature, timestamp }) takes one object; the first argument is a string, not that object',
};

/** attw's command line, from this repository's devDependencies. */
function attwBin(): string {
  const manifest = createRequire(join(ROOT, 'package.json')).resolve('@arethetypeswrong/cli/package.json');
  return join(dirname(manifest), JSON.parse(readFileSync(manifest, 'utf8')).bin.attw);
}

describe('the packed package', { skip: PGLITE_PASS_ONLY }, () => {
  test('holds the ESM and CommonJS builds with declarations, README and LICENSE, and no sources or tests', () => {
    for (const file of [
      'package.json',
      'README.md',
      'LICENSE',
      'dist/esm/universal.js',
      'dist/esm/universal.d.ts',
      'dist/esm/server.js',
      'dist/cjs/universal.js',
      'dist/cjs/universal.d.ts',
      'dist/cjs/server.js',
      'dist/cjs/package.json',
      'server/package.json',
    ]) {
      assert.ok(packed.includes(file), `${file} is in the tarball`);
    }
    assert.deepEqual(
      packed.filter((file) => file.startsWith('src/') || file.includes('.test.') || file.includes('index.')),
      [],
    );
  });

  test('its manifest says where the source, the home page and the issue tracker are', async () => {
    const manifest = JSON.parse(
      await readFile(join(scratch, 'node_modules/@licensing/client/package.json'), 'utf8'),
    );
    assert.equal(manifest.repository.directory, 'packages/client');
    assert.match(manifest.repository.url, /^git\+https:\/\/.+\.git$/);
    assert.match(manifest.homepage, /^https:\/\/.+packages\/client/);
    assert.match(manifest.bugs.url, /^https:\/\/.+\/issues$/);
  });

  test('works from an ESM script: both entries, an offline token check and a webhook', async () => {
    const result = await runScript(
      'check.mjs',
      `import * as root from '@licensing/client';\nimport * as server from '@licensing/client/server';\n${SCRIPT_BODY}`,
    );
    assert.deepEqual(result, expectedRun);
  });

  test('works from a CommonJS script with require()', async () => {
    const result = await runScript(
      'check.cjs',
      `const root = require('@licensing/client');\nconst server = require('@licensing/client/server');\n(async () => {${SCRIPT_BODY}})();`,
    );
    assert.deepEqual(result, expectedRun);
  });

  test('resolves both entries to declarations and JavaScript under every module resolution TypeScript offers', async () => {
    // attw's strict profile: node10, node16 from CommonJS and from ESM, and bundler, all of them
    // (the node16 profile would leave out node10, the esm-only one CommonJS). The tarball is the
    // one packed above, so `attw --pack` would check the same files after a second build.
    const attw = [attwBin(), tarball, '--profile', 'strict', '--format', 'json'];
    const answer = await run(process.execPath, attw, { maxBuffer: 16 * 1024 * 1024 }).catch(
      (error: { stdout?: string; stderr?: string; code?: number }) => {
        if (!error.stdout) assert.fail(`attw failed (${error.code}): ${error.stderr}`);
        return { stdout: error.stdout };
      },
    );
    type Resolved = { resolution?: { fileName: string }; implementationResolution?: { fileName: string } };
    const { analysis } = JSON.parse(answer.stdout) as {
      analysis: {
        problems: unknown[];
        entrypoints: Record<string, { resolutions: Record<string, Resolved> }>;
      };
    };
    assert.deepEqual(analysis.problems, []);
    const entries = [
      ['.', 'universal'],
      ['./server', 'server'],
    ] as const;
    for (const [entry, file] of entries) {
      const resolutions = analysis.entrypoints[entry]?.resolutions ?? {};
      assert.deepEqual(Object.keys(resolutions).sort(), ['bundler', 'node10', 'node16-cjs', 'node16-esm']);
      for (const [kind, found] of Object.entries(resolutions)) {
        assert.match(
          found.resolution?.fileName ?? '',
          new RegExp(`/dist/(cjs|esm)/${file}\\.d\\.ts$`),
          `${entry} under ${kind}`,
        );
        assert.match(
          found.implementationResolution?.fileName ?? '',
          new RegExp(`/dist/(cjs|esm)/${file}\\.js$`),
          `${entry} under ${kind}`,
        );
      }
    }
  });

  test('type-checks under node10, node16 (ESM and CommonJS) and bundler resolution, README examples included', async () => {
    const readme = await readFile(README, 'utf8');
    const examples = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
    assert.ok(examples.length >= 8, 'the README has its examples');
    await mkdir(join(scratch, 'node16'));
    await mkdir(join(scratch, 'browser'));
    for (const [i, example] of examples.entries())
      await writeFile(join(scratch, `node16/readme-${i + 1}.ts`), example);
    await writeFile(
      join(scratch, 'node16/required.cts'),
      `import sdk = require('@licensing/client');
import server = require('@licensing/client/server');
export const verifier: sdk.LicenseTokenVerifier = new sdk.LicenseTokenVerifier({ appId: 'a', jwksUri: 'https://x/jwks' });
export const check = (input: server.VerifyWebhookInput): server.WebhookEnvelope => server.verifyWebhook(input);
// @ts-expect-error the server helpers are not on the root entry
sdk.verifyWebhook;
`,
    );
    // An older project: moduleResolution node10 reads no `exports`; /server is found through the
    // package.json in the package's server folder.
    await mkdir(join(scratch, 'node10'));
    await writeFile(
      join(scratch, 'node10/legacy.ts'),
      `import { LicenseTokenVerifier } from '@licensing/client';
import { verifyWebhook, type VerifyWebhookInput } from '@licensing/client/server';
export const verifier = new LicenseTokenVerifier({ appId: 'a', jwksUri: 'https://x/jwks' });
export const eventType = (input: VerifyWebhookInput): string => verifyWebhook(input).type;
`,
    );
    // A browser project: DOM types only, no @types/node, the root entry only.
    await writeFile(
      join(scratch, 'browser/app.ts'),
      `import { LicenseTokenVerifier, LicensingClient, responseInfo, type JsonWebKeySet } from '@licensing/client';
const client = new LicensingClient({ baseUrl: location.origin, retries: 1 });
const stored = JSON.parse(localStorage.getItem('keySet') ?? '{"keys":[]}') as JsonWebKeySet;
const verifier = new LicenseTokenVerifier({ appId: 'a', keySet: stored, jwksUri: client.jwksUri });
const result = await client.verify({ key: 'K', appId: 'a' });
if (result.license_token) console.log((await verifier.verify(result.license_token)).plan, responseInfo(result)?.attempts);
`,
    );
    const base = {
      strict: true,
      noEmit: true,
      target: 'ES2022',
      skipLibCheck: false,
      noUncheckedIndexedAccess: true,
    };
    await writeFile(
      join(scratch, 'tsconfig.node16.json'),
      JSON.stringify({
        compilerOptions: {
          ...base,
          module: 'node16',
          moduleResolution: 'node16',
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
        },
        include: ['node16'],
      }),
    );
    await writeFile(
      join(scratch, 'tsconfig.bundler.json'),
      JSON.stringify({
        compilerOptions: {
          ...base,
          module: 'preserve',
          moduleResolution: 'bundler',
          lib: ['ES2022', 'DOM'],
          types: [],
        },
        include: ['browser'],
      }),
    );
    await writeFile(
      join(scratch, 'tsconfig.node10.json'),
      JSON.stringify({
        compilerOptions: {
          ...base,
          module: 'commonjs',
          moduleResolution: 'node10',
          types: ['node'],
          typeRoots: [join(ROOT, 'node_modules/@types')],
        },
        include: ['node10'],
      }),
    );
    for (const config of ['tsconfig.node10.json', 'tsconfig.node16.json', 'tsconfig.bundler.json']) {
      await run(process.execPath, [TSC, '-p', config], { cwd: scratch }).catch((error) => {
        assert.fail(`${config}:\n${error.stdout}${error.stderr}`);
      });
    }
  });

  test('the README documents every export of both entries, types included', async () => {
    const readme = await readFile(README, 'utf8');
    const dist = join(scratch, 'node_modules/@licensing/client/dist/esm');
    const program = ts.createProgram([join(dist, 'universal.d.ts'), join(dist, 'server.d.ts')], {
      module: ts.ModuleKind.Node16,
      moduleResolution: ts.ModuleResolutionKind.Node16,
      types: [],
    });
    const checker = program.getTypeChecker();
    const names = new Set<string>();
    for (const entry of ['universal.d.ts', 'server.d.ts']) {
      const file = program.getSourceFile(join(dist, entry));
      const symbol = file && checker.getSymbolAtLocation(file);
      assert.ok(symbol, entry);
      for (const exported of checker.getExportsOfModule(symbol)) names.add(exported.name);
    }
    assert.ok(names.size > 40, `found ${names.size} exports`);
    const undocumented = [...names].filter((name) => !readme.includes(`\`${name}`));
    assert.deepEqual(undocumented, []);
  });
});
