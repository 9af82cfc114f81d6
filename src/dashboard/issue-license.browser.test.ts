import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { launchBrowser, type TestBrowser } from '../testing/browser.js';
import {
  createApp,
  type Seller,
  signUp,
  startTestServer,
  TEST_PASSWORD,
  type TestServer,
} from '../testing/harness.js';

/**
 * "Issue license" on an untouched form, in headless Chromium: the dashboard asks first, because a
 * license with nothing set works for anyone with its key, everywhere, for ever. The app's license
 * list (read through the API) proves that nothing is issued until the seller confirms; a form
 * with any field filled issues at once, as before.
 */
let server: TestServer;
let browser: TestBrowser;
let seller: Seller;
let appId: string;

before(async () => {
  server = await startTestServer();
  browser = await launchBrowser();
  seller = await signUp(server);
  appId = (await createApp(server, seller.token, 'Photo Tool')).id;
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

const licenseCount = async () =>
  (await server.api.get(`/apps/${appId}/licenses`, { token: seller.token })).expect(200).body.total as number;

async function licensesScreen(): Promise<Page> {
  const page = await browser.newPage();
  await page.goto(`${server.service.coreUrl}/dashboard`);
  await page.getByLabel('E-mail').fill(seller.user.email);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByLabel('Password').press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  await page.evaluate(`location.hash = '#/licenses'`);
  await page.getByRole('form', { name: 'Issue a license' }).waitFor();
  return page;
}

describe('issuing a license from an empty form', () => {
  test('asks first; Cancel and Escape issue nothing, confirming issues one', async (t) => {
    const page = await licensesScreen();
    t.after(() => page.context().close());
    const form = page.getByRole('form', { name: 'Issue a license' });
    const dialog = page.getByRole('dialog', { name: 'Issue a license with nothing filled in?' });
    assert.equal(await licenseCount(), 0);

    await form.getByRole('button', { name: 'Issue license' }).click();
    await dialog.waitFor();
    assert.match(
      (await dialog.textContent()) ?? '',
      /no buyer e-mail, no product, no expiry and no device limit/,
    );
    assert.ok(
      await dialog.getByRole('button', { name: 'Cancel' }).evaluate((element) => element.matches(':focus')),
      'the dialog starts on Cancel',
    );
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await licenseCount(), 0, 'Cancel issues nothing');
    assert.equal(await page.getByRole('region', { name: 'Issued license' }).count(), 0);

    // Enter in a field submits the form too, and Escape closes the question.
    await form.getByLabel('Plan').press('Enter');
    await dialog.waitFor();
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    assert.equal(await licenseCount(), 0, 'Escape issues nothing');

    await form.getByRole('button', { name: 'Issue license' }).click();
    await dialog.getByRole('button', { name: 'Issue license' }).click();
    const issued = page.getByRole('region', { name: 'Issued license' });
    await issued.waitFor();
    assert.equal(await licenseCount(), 1, 'confirmed: one license');
    const key = ((await issued.locator('code').textContent()) ?? '').trim();
    const list = (await server.api.get(`/apps/${appId}/licenses`, { token: seller.token })).expect(200).body;
    assert.deepEqual(
      list.licenses.map((license: { key: string; email: string | null; maxDevices: number | null }) => [
        license.key,
        license.email,
        license.maxDevices,
      ]),
      [[key, null, null]],
    );
  });

  test('a form with a field filled issues at once, without asking', async (t) => {
    const page = await licensesScreen();
    t.after(() => page.context().close());
    const before = await licenseCount();
    const form = page.getByRole('form', { name: 'Issue a license' });
    await form.getByLabel('Buyer e-mail').fill('ann@example.com');
    await form.getByRole('button', { name: 'Issue license' }).click();
    await page.getByRole('region', { name: 'Issued license' }).waitFor();
    assert.equal(await page.getByRole('dialog').count(), 0, 'no question asked');
    assert.equal(await licenseCount(), before + 1);
  });
});
