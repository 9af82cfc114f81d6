import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { builtinModules } from 'node:module';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { build, type Plugin } from 'esbuild';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { launchBrowser, type TestBrowser } from '../../../src/testing/browser.js';
import type { JsonWebKeySet } from './universal.js';

/**
 * The root entry is for browsers too: bundled for the browser it reaches no Node built-in, and the
 * bundle checks a license token and a downloaded file's manifest offline in Chromium with a
 * stored key set.
 */
const entry = (name: string) => fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
const BUILTINS = new Set(builtinModules);

/** Bundles an entry for the browser and lists the Node built-ins it reaches, with who imports them. */
async function bundleForBrowser(file: string): Promise<{ code: string; builtins: string[] }> {
  const builtins: string[] = [];
  const noBuiltins: Plugin = {
    name: 'no-node-builtins',
    setup(b) {
      b.onResolve({ filter: /.*/ }, (args) => {
        const name = args.path.replace(/^node:/, '');
        if (!args.path.startsWith('node:') && !BUILTINS.has(name)) return undefined;
        builtins.push(`${args.path} (from ${args.importer.replace(/.*\/(node_modules|src)\//, '')})`);
        return { path: args.path, external: true };
      });
    },
  };
  const result = await build({
    entryPoints: [file],
    bundle: true,
    platform: 'browser',
    format: 'iife',
    globalName: 'licensing',
    write: false,
    logLevel: 'silent',
    plugins: [noBuiltins],
  });
  return { code: result.outputFiles[0]?.text ?? '', builtins };
}

describe('the browser entry', () => {
  test('bundles for the browser without any Node built-in; the /server entry does need them', async () => {
    assert.deepEqual((await bundleForBrowser(entry('universal'))).builtins, []);
    // The same check catches what it is there for: the secret-holding helpers use node:crypto.
    const server = await bundleForBrowser(entry('server'));
    assert.ok(
      server.builtins.some((found) => found.startsWith('node:crypto')),
      server.builtins.join(', '),
    );
  });

  describe('in Chromium', () => {
    let browser: TestBrowser;
    before(async () => {
      browser = await launchBrowser();
    });
    after(() => browser.close());

    test('checks a license token offline against a stored key set, and refuses another app’s', async () => {
      const { code } = await bundleForBrowser(entry('universal'));
      const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
      const jwk = await exportJWK(publicKey);
      const keySet: JsonWebKeySet = { keys: [{ ...jwk, kty: 'RSA', kid: 'k1', alg: 'RS256', use: 'sig' }] };
      const token = await new SignJWT({ token_use: 'service_license_v1', plan: 'pro' })
        .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
        .setSubject('lic_1')
        .setAudience('app_1')
        .setJti('jti_1')
        .setIssuedAt()
        .setExpirationTime('15m')
        .sign(privateKey);

      // Served from http://localhost, a secure context (WebCrypto is missing on about:blank).
      const page = await browser.newPage();
      await page.route('http://localhost/', (route) =>
        route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>sdk</title>' }),
      );
      await page.goto('http://localhost/');
      await page.addScriptTag({ content: code });
      const outcome = await page.evaluate(
        async ({ token, keySet }) => {
          const sdk = (globalThis as unknown as { licensing: typeof import('./universal.js') }).licensing;
          const mine = new sdk.LicenseTokenVerifier({ appId: 'app_1', keySet });
          const claims = await mine.verify(token);
          const other = new sdk.LicenseTokenVerifier({ appId: 'app_2', keySet });
          const refused = await other.verify(token).then(
            () => 'accepted',
            (error: { code?: string }) => error.code,
          );
          return { sub: claims.sub, plan: claims.plan, refused, exports: Object.keys(sdk).sort() };
        },
        { token, keySet },
      );
      assert.deepEqual(outcome, {
        sub: 'lic_1',
        plan: 'pro',
        refused: 'wrong_audience',
        exports: [
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
        ],
      });
    });

    test('checks a downloaded file against its signed manifest, and refuses a changed one', async () => {
      const { code } = await bundleForBrowser(entry('universal'));
      const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
      const jwk = await exportJWK(publicKey);
      const keySet: JsonWebKeySet = {
        keys: [{ ...jwk, kty: 'RSA', kid: 'o1', alg: 'RS256', use: 'sig', purpose: 'offline' }],
      };
      const file = 'the bytes of PhotoTool 1.4.0';
      const manifest = await new SignJWT({
        token_use: 'service_release_manifest_v1',
        app: 'app_1',
        release: 'rel_1',
        version: '1.4.0',
        filename: 'PhotoTool-1.4.0.zip',
        platform: null,
        arch: null,
        size: Buffer.byteLength(file),
        sha256: createHash('sha256').update(file).digest('hex'),
        sha512: createHash('sha512').update(file).digest('hex'),
      })
        .setProtectedHeader({ alg: 'RS256', kid: 'o1' })
        .setIssuedAt()
        .sign(privateKey);

      const page = await browser.newPage();
      await page.route('http://localhost/', (route) =>
        route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>sdk</title>' }),
      );
      await page.goto('http://localhost/');
      await page.addScriptTag({ content: code });
      const outcome = await page.evaluate(
        async ({ file, manifest, keySet }) => {
          const sdk = (globalThis as unknown as { licensing: typeof import('./universal.js') }).licensing;
          const options = { keySet, appId: 'app_1', version: '1.4.0' };
          const checked = await sdk.verifyArtifact(new Blob([file]), manifest, options);
          const changed = await sdk
            .verifyArtifact(new TextEncoder().encode(file.replace('1.4.0', '1.4.1')), manifest, options)
            .then(
              () => 'accepted',
              (error: { code?: string }) => error.code,
            );
          return { filename: checked.filename, changed };
        },
        { file, manifest, keySet },
      );
      assert.deepEqual(outcome, { filename: 'PhotoTool-1.4.0.zip', changed: 'digest_mismatch' });
    });
  });
});
