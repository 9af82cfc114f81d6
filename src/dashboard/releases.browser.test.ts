import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, type TestContext, test } from 'node:test';
import type { Page } from 'playwright-core';
import {
  contrastProblems,
  launchBrowser,
  screenshot,
  sidewaysOverflow,
  type TestBrowser,
} from '../testing/browser.js';
import {
  createApp,
  type Seller,
  signUp,
  startTestServer,
  TEST_PASSWORD,
  type TestServer,
} from '../testing/harness.js';

/**
 * An app's releases in headless Chromium, at a desktop's width and a phone's: a seller creates a
 * release, uploads its file with a progress bar that reaches 100 %, removes a draft's file, adds
 * a file they host by its address,
 * filters the list through its address, publishes and yanks with confirmations. Every step is
 * checked through the API, the stored file by its SHA-256.
 */
const PHONE = { width: 375, height: 812 };
const DESKTOP = { width: 1280, height: 900 };
/** Upload speed while the file goes up, so the bar has steps to show (bytes a second). */
const UPLOAD_BYTES_PER_SECOND = 2_000_000;

let server: TestServer;
let browser: TestBrowser;
let seller: Seller;
let appId: string;
const artifactDir = fs.mkdtempSync(path.join(os.tmpdir(), 'licensing-releases-browser-'));

before(async () => {
  server = await startTestServer({ ARTIFACT_DIR: artifactDir });
  browser = await launchBrowser();
  seller = await signUp(server);
  appId = (await createApp(server, seller.token, 'Photo Tool')).id;
});
after(async () => {
  await browser?.close();
  await server?.stop();
  fs.rmSync(artifactDir, { recursive: true, force: true });
});

const token = () => ({ token: seller.token });
const heading = (page: Page, name: string) => page.getByRole('heading', { level: 1, name, exact: true });
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

async function signedIn(t: TestContext, viewport: { width: number; height: number }) {
  const page = await browser.newPage({ viewport });
  t.after(() => page.context().close());
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], {
    origin: new URL(server.service.coreUrl).origin,
  });
  await page.goto(`${server.service.coreUrl}/dashboard`);
  await page.getByLabel('E-mail').fill(seller.user.email);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByLabel('Password').press('Enter');
  await heading(page, 'Overview').waitFor();
  return { page, errors };
}

/** No sideways scroll and no text below AA contrast, in the light and the dark scheme. */
async function judge(page: Page, where: string) {
  for (const colorScheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme });
    assert.equal(await sidewaysOverflow(page), 0, `${where} (${colorScheme}) scrolls sideways`);
    assert.deepEqual(await contrastProblems(page), [], `${where} (${colorScheme}): text below AA contrast`);
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

const releaseOf = async (releaseId: string) =>
  (await server.api.get(`/apps/${appId}/releases/${releaseId}`, token())).expect(200).body;
const artifactsOf = async (releaseId: string) =>
  (await server.api.get(`/apps/${appId}/releases/${releaseId}/artifacts`, token())).expect(200).body
    .artifacts as {
    filename: string;
    platform: string | null;
    arch: string | null;
    size: number | null;
    sha256: string | null;
    url: string | null;
  }[];

/** A client with a license that may have the release downloads its file once, through a link. */
async function downloadOnce(version: string, filename: string) {
  const license = (
    await server.api.post(`/apps/${appId}/licenses`, { features: ['pro', 'export'] }, token())
  ).expect(201).body;
  const link = (
    await server.api.post('/releases/download', {
      appId,
      key: license.key,
      version,
      filename,
      platform: 'linux',
      arch: 'x64',
    })
  ).expect(200).body;
  const path = link.downloadUrl.slice(server.config.apiBaseUrl.length);
  const res = await fetch(`${server.service.coreUrl}/v1${path}`);
  assert.equal(res.status, 200);
  await res.arrayBuffer();
}

/**
 * Every value the page's progress bars take from now on, in order: recorded by an observer put
 * in through the debugging protocol (the page's policy allows no script of ours).
 */
async function recordProgress(page: Page) {
  await page.evaluate(`
    window.progressSeen = [];
    const note = (bar) => window.progressSeen.push(Number(bar.value));
    new MutationObserver((changes) => {
      for (const change of changes) {
        if (change.type === 'attributes' && change.target instanceof HTMLProgressElement) note(change.target);
        for (const added of change.addedNodes ?? [])
          if (added instanceof Element) added.querySelectorAll('progress').forEach(note);
      }
    }).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['value'] });
  `);
  return async () => (await page.evaluate('window.progressSeen')) as number[];
}

for (const [label, viewport, version] of [
  ['a desktop', DESKTOP, '1.4.0'],
  ['a phone', PHONE, '1.5.0'],
] as const) {
  describe(`releases on ${label} (${viewport.width} px)`, () => {
    test('create, upload with progress to 100 %, remove a draft’s file, add a hosted one, filter, publish and yank', async (t) => {
      const { page, errors } = await signedIn(t, viewport);
      const width = viewport.width;
      await page.evaluate(`location.hash = '#/apps/${appId}/releases'`);
      await heading(page, 'Releases: Photo Tool').waitFor();
      await page.getByText('Loading…').first().waitFor({ state: 'detached' });

      // Create: the panel opens on its first field; the release is a draft with its entitlement.
      await page.getByRole('button', { name: 'New release' }).click();
      const form = page.getByRole('form', { name: 'New release' });
      assert.ok(
        await form.getByLabel('Version').evaluate((element) => element.matches(':focus')),
        'focus in the first field',
      );
      await form.getByLabel('Version').fill(`v${version}`);
      await form.getByLabel('Release notes').fill('Exports to PDF.\nFixes the crash on start.');
      await form.getByLabel('Required entitlements').fill('pro, export');
      await form.getByRole('button', { name: 'Create release' }).click();
      await heading(page, `Release ${version}`).waitFor();
      const releaseId = /\/releases\/([0-9a-f-]+)$/.exec(new URL(page.url()).hash)?.[1] as string;
      const created = await releaseOf(releaseId);
      assert.equal(created.status, 'draft');
      assert.equal(created.version, version, 'the leading v dropped');
      assert.deepEqual(created.requiredFeatures, ['pro', 'export']);
      assert.equal(created.notes, 'Exports to PDF.\nFixes the crash on start.');

      // Upload, slowed down so the bar moves; it shows its way up and ends at 100 %.
      const bytes = randomBytes(1_500_000);
      const filename = `PhotoTool-${version}-x86_64.AppImage`;
      const upload = page.getByRole('form', { name: 'Upload a file' });
      await upload.getByLabel('File', { exact: true }).setInputFiles({
        name: filename,
        mimeType: 'application/octet-stream',
        buffer: bytes,
      });
      assert.equal(await upload.getByLabel('File name').inputValue(), filename, 'the file’s own name');
      await upload.getByLabel('Platform').fill('linux');
      await upload.getByLabel('Architecture').fill('x64');
      const seen = await recordProgress(page);
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 0,
        downloadThroughput: -1,
        uploadThroughput: UPLOAD_BYTES_PER_SECOND,
      });
      await upload.getByRole('button', { name: 'Upload file' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `${filename} uploaded` })
        .waitFor();
      await cdp.send('Network.emulateNetworkConditions', {
        offline: false,
        latency: 0,
        downloadThroughput: -1,
        uploadThroughput: -1,
      });
      const bar = upload.getByRole('progressbar', { name: `Uploaded ${filename}` });
      assert.equal(await bar.getAttribute('value'), '100');
      assert.match((await upload.locator('.upload-progress').textContent()) ?? '', /100 %/);
      const values = await seen();
      assert.equal(values.at(-1), 100, `the bar ends at 100 % (${values.join(', ')})`);
      assert.ok(
        values.some((value) => value > 0 && value < 100),
        `the bar showed the upload on its way (${values.join(', ')})`,
      );
      assert.deepEqual(
        values,
        [...values].sort((a, b) => a - b),
        'and never went back',
      );

      const [stored] = await artifactsOf(releaseId);
      assert.equal(stored?.filename, filename);
      assert.equal(stored?.sha256, sha256(bytes), 'the bytes stored are the file’s');
      assert.equal(stored?.size, bytes.length);
      assert.deepEqual([stored?.platform, stored?.arch], ['linux', 'x64']);
      const files = page.getByRole('table', { name: 'Files' });
      const row = files.locator('tbody tr').filter({ hasText: filename });
      await row.waitFor();
      assert.match((await row.textContent()) ?? '', new RegExp(`${sha256(bytes).slice(0, 12)}…`));
      assert.match((await row.textContent()) ?? '', /1\.5\s?MB/);
      await row.getByRole('button', { name: `Copy the SHA-256 of ${filename}` }).click();
      await page.getByRole('status').filter({ hasText: 'SHA-256 copied to the clipboard' }).waitFor();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), sha256(bytes));

      // A second file, removed again after a confirmation (Cancel first keeps it).
      await upload.getByLabel('File', { exact: true }).setInputFiles({
        name: 'notes.txt',
        mimeType: 'text/plain',
        buffer: Buffer.from('what is new'),
      });
      await upload.getByRole('button', { name: 'Upload file' }).click();
      await page.getByRole('status').filter({ hasText: 'notes.txt uploaded' }).waitFor();
      const notesRow = files.locator('tbody tr').filter({ hasText: 'notes.txt' });
      await notesRow.getByRole('button', { name: 'Remove notes.txt' }).click();
      const removal = page.getByRole('dialog', { name: 'Remove notes.txt?' });
      await removal.getByRole('button', { name: 'Cancel' }).click();
      assert.equal((await artifactsOf(releaseId)).length, 2, 'Cancel removes nothing');
      await notesRow.getByRole('button', { name: 'Remove notes.txt' }).click();
      await removal.getByRole('button', { name: 'Remove file' }).click();
      await notesRow.waitFor({ state: 'detached' });
      assert.deepEqual(
        (await artifactsOf(releaseId)).map((artifact) => artifact.filename),
        [filename],
      );

      // A file the seller hosts: an address that is not https is refused under its field, then added.
      const hosted = page.getByRole('form', { name: 'Add a file you host' });
      const hostedName = `PhotoTool-${version}-universal.dmg`;
      const hostedUrl = `https://downloads.photo-tool.example.com/releases/${version}/${hostedName}`;
      await hosted.getByLabel('Address').fill(hostedUrl.replace('https:', 'http:'));
      await hosted.getByLabel('File name').fill(hostedName);
      await hosted.getByLabel('Platform').fill('macos');
      await hosted.getByRole('button', { name: 'Add file' }).click();
      await hosted.getByText('must use https').first().waitFor();
      await hosted.getByLabel('Address').fill(hostedUrl);
      await hosted.getByLabel('Size in bytes').fill('1234');
      await hosted.getByRole('button', { name: 'Add file' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `${hostedName} added` })
        .waitFor();
      const hostedRow = files.locator('tbody tr').filter({ hasText: hostedName });
      await hostedRow.getByRole('link', { name: hostedUrl }).waitFor();
      assert.match((await hostedRow.textContent()) ?? '', /Not given/, 'no SHA-256 declared');
      const added = (await artifactsOf(releaseId)).find((artifact) => artifact.filename === hostedName);
      assert.deepEqual(
        [added?.platform, added?.size, added?.sha256, added?.url],
        ['macos', 1234, null, hostedUrl],
      );
      assert.equal(await hosted.getByLabel('Address').inputValue(), '', 'the form is emptied');
      await judge(page, `a draft at ${width} px`);

      // The list: newest first, filtered through the address.
      await page.getByRole('link', { name: 'Back to the app’s releases' }).click();
      await heading(page, 'Releases: Photo Tool').waitFor();
      const list = page.getByRole('table', { name: 'Releases' });
      await list.getByRole('link', { name: version }).waitFor();
      const filters = page.getByRole('search').getByRole('form', { name: 'Filter releases' });
      await filters.getByLabel('Status').selectOption('published');
      await filters.getByRole('button', { name: 'Search', exact: true }).click();
      await page.getByText('No release matches these filters.').waitFor();
      assert.match(page.url(), /#\/apps\/[^/]+\/releases\?status=published$/);
      await page.goBack();
      await list.getByRole('link', { name: version }).waitFor();
      await page.evaluate(`location.hash = '#/apps/${appId}/releases?status=draft&channel=stable'`);
      await page.getByText(/^\d+ releases? found\.$/).waitFor();
      assert.equal(
        await filters.getByLabel('Status').inputValue(),
        'draft',
        'the filter read from the address',
      );
      await list.getByRole('link', { name: version }).click();
      await heading(page, `Release ${version}`).waitFor();

      // Publish: asked first, Cancel does nothing.
      await page.getByRole('button', { name: 'Publish' }).click();
      const publishing = page.getByRole('dialog', { name: `Publish version ${version}?` });
      assert.ok(
        await publishing
          .getByRole('button', { name: 'Cancel' })
          .evaluate((element) => element.matches(':focus')),
        'the dialog starts on Cancel',
      );
      await publishing.getByRole('button', { name: 'Cancel' }).click();
      assert.equal((await releaseOf(releaseId)).status, 'draft');
      await page.getByRole('button', { name: 'Publish' }).click();
      await publishing.getByRole('button', { name: 'Publish release' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Version ${version} published` })
        .waitFor();
      await page.getByRole('definition').getByText('published', { exact: true }).waitFor();
      assert.equal((await releaseOf(releaseId)).status, 'published');
      assert.equal(await files.getByRole('button', { name: /^Remove/ }).count(), 0, 'published files stay');

      // A client downloads the file; the release's page shows it on today's bar and by file.
      await page.getByRole('heading', { name: 'Downloads' }).waitFor();
      await page.getByText('Downloads per day, last 30 days (0)').first().waitFor();
      await downloadOnce(version, filename);
      await page.reload();
      await heading(page, `Release ${version}`).waitFor();
      await page.getByText('Downloads per day, last 30 days (1)').first().waitFor();
      const perFile = page.getByRole('table', { name: 'Downloads per file, last 30 days' });
      const fileRow = perFile.locator('tbody tr').filter({ hasText: filename });
      assert.match((await fileRow.textContent()) ?? '', /linux.*x64.*1$/s);
      await judge(page, `a published release at ${width} px`);
      await screenshot(page, `release-${width}`);

      // Yank: asked first, then final.
      await page.getByRole('button', { name: 'Yank' }).click();
      const yanking = page.getByRole('dialog', { name: `Yank version ${version}?` });
      await yanking.getByRole('button', { name: 'Yank release' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Version ${version} yanked` })
        .waitFor();
      await page.getByText('A yanked release takes no new file.').waitFor();
      const yanked = await releaseOf(releaseId);
      assert.equal(yanked.status, 'yanked');
      assert.ok(yanked.yankedAt);
      assert.equal(await page.getByRole('form', { name: 'Upload a file' }).count(), 0);
      assert.equal(await page.getByRole('button', { name: 'Yank' }).count(), 0);

      await page.getByRole('link', { name: 'Back to the app’s releases' }).click();
      await list.getByRole('link', { name: version }).waitFor();
      await page.getByText('Loading…').first().waitFor({ state: 'detached' });
      await judge(page, `the releases list at ${width} px`);
      await screenshot(page, `releases-${width}`);
      // The browser reports the refused address's 400 itself; nothing else may show in the console.
      assert.deepEqual(
        errors,
        ['Failed to load resource: the server responded with a status of 400 (Bad Request)'],
        'no console error',
      );
    });
  });
}
