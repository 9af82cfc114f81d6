import assert from 'node:assert/strict';
import { after, before, describe, type TestContext, test } from 'node:test';
import type { Page } from 'playwright-core';
import { launchBrowser, screenshot, type TestBrowser } from '../testing/browser.js';
import {
  createApp,
  issueLicense,
  type Seller,
  signUp,
  startTestServer,
  TEST_PASSWORD,
  type TestServer,
} from '../testing/harness.js';
import { buyWithSandbox } from '../testing/purchases.js';

/**
 * The overview's and the analytics page's charts and cards at a phone's width and a desktop's, in
 * headless Chromium: no two axis labels overlap (the labels along the bottom are thinned out to fit
 * the width), the latest day is always named, a chart of counts marks whole numbers only, and no
 * card sits alone on a row. The figures are small on purpose (1 activation, 3 verifications): a
 * halved axis would read 0.5 and 2.5 there.
 */
let server: TestServer;
let browser: TestBrowser;
/** One currency (six overview cards) and two currencies (seven). */
let oneCurrency: Seller;
let twoCurrencies: Seller;
let admin: Seller;

const PHONE = { width: 375, height: 812 };
const TABLET = { width: 800, height: 1000 };
const DESKTOP = { width: 1280, height: 800 };

before(async () => {
  server = await startTestServer({}, { ownDatabase: true });
  browser = await launchBrowser();
  admin = await signUp(server, { role: 'ADMIN' });
  oneCurrency = await signUp(server);
  twoCurrencies = await signUp(server);
  for (const [seller, currencies] of [
    [oneCurrency, ['USD']],
    [twoCurrencies, ['USD', 'EUR']],
  ] as const) {
    const appId = (await createApp(server, seller.token, 'Photo Tool')).id;
    for (const currency of currencies) {
      const product = (
        await server.api.post(
          '/products',
          { appId, name: `Pro ${currency}`, price: 19.99, currency },
          { token: seller.token },
        )
      ).expect(201).body;
      await buyWithSandbox(server, product.id);
    }
    const license = await issueLicense(server, { token: seller.token, appId }, { maxDevices: 2 });
    for (const hwuid of ['laptop', 'laptop', 'laptop'])
      (await server.api.post('/licenses/verify', { key: license.key, hwuid })).expect(200);
  }
  assert.equal(await server.service.modules.verificationCounts.flush(), true);
});
after(async () => {
  await browser?.close();
  await server?.stop();
});

async function openSignedIn(t: TestContext, seller: Seller, viewport: { width: number; height: number }) {
  const page = await browser.newPage();
  t.after(() => page.context().close());
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  t.after(() => assert.deepEqual(errors, [], 'no uncaught error'));
  await page.setViewportSize(viewport);
  await page.goto(`${server.service.coreUrl}/dashboard`);
  await page.getByLabel('E-mail').fill(seller.user.email);
  await page.getByLabel('Password').fill(TEST_PASSWORD);
  await page.getByLabel('Password').press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();
  return page;
}

/**
 * Goes to a screen and waits until its `charts` charts are there, the last with `points` points
 * (a screen shows its former figures until the new ones arrive), each drawn for its figure's width.
 */
async function showCharts(page: Page, hash: string, charts: number, points: number) {
  await page.evaluate(`location.hash = ${JSON.stringify(hash)}`);
  // A function, not a string: the page's policy forbids evaluating strings.
  const body = await page.locator('body').elementHandle();
  await page.waitForFunction(
    ([root, count, last]) => {
      const figures = [...(root?.querySelectorAll('figure.chart') ?? [])];
      return (
        figures.length === count &&
        figures[count - 1]?.querySelectorAll('tbody tr').length === last &&
        figures.every((figure) => {
          const svg = figure.querySelector('svg');
          return svg?.viewBox.baseVal.width === Math.floor(figure.getBoundingClientRect().width);
        })
      );
    },
    [body, charts, points] as const,
  );
}

interface Box {
  text: string;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

interface DrawnChart {
  title: string;
  points: number;
  svg: Box;
  /** Up the side. */
  values: Box[];
  /** Along the bottom. */
  labels: Box[];
  /** The last point's label in the data table. */
  lastRow: string;
}

/**
 * Every chart on the page as drawn: its axis labels' boxes on screen. In-page code is a string:
 * the suite's compiled mirror names functions with a helper the page does not have.
 */
const READ_CHARTS = `(() => {
  const box = (element) => {
    const rect = element.getBoundingClientRect();
    return { text: element.textContent ?? '', left: rect.left, right: rect.right, top: rect.top, bottom: rect.bottom };
  };
  return [...document.querySelectorAll('figure.chart')].map((figure) => {
    const rows = figure.querySelectorAll('tbody tr');
    return {
      title: figure.querySelector('figcaption')?.textContent ?? '',
      points: rows.length,
      svg: box(figure.querySelector('svg')),
      values: [...figure.querySelectorAll('svg text.axis-label.value')].map(box),
      labels: [...figure.querySelectorAll('svg text.axis-label.point')].map(box),
      lastRow: rows[rows.length - 1]?.querySelector('th')?.textContent ?? '',
    };
  });
})()`;

const drawnCharts = (page: Page) => page.evaluate(READ_CHARTS) as Promise<DrawnChart[]>;

/** The cards' list and each card, as laid out. */
const READ_CARDS = `(() => {
  const rect = (item) => {
    const r = item.getBoundingClientRect();
    return { top: Math.round(r.top), left: r.left, width: r.width };
  };
  const list = document.querySelector('ul.cards');
  return { list: rect(list), cards: [...list.querySelectorAll(':scope > li.card')].map(rect) };
})()`;

const overlap = (a: Box, b: Box) =>
  a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

/** Counts use whole numbers; en-US groups thousands with commas. */
const WHOLE = /^\d{1,3}(,\d{3})*$/;

function assertReadable(chart: DrawnChart, where: string, counts: boolean) {
  const all = [...chart.values, ...chart.labels];
  for (const [index, a] of all.entries())
    for (const b of all.slice(index + 1))
      assert.ok(!overlap(a, b), `${where}, ${chart.title}: "${a.text}" overlaps "${b.text}"`);
  for (const label of all)
    assert.ok(
      label.left >= chart.svg.left - 0.5 && label.right <= chart.svg.right + 0.5,
      `${where}, ${chart.title}: "${label.text}" runs past the chart's edge`,
    );
  assert.ok(chart.labels.length >= Math.min(3, chart.points), `${where}, ${chart.title}: too few labels`);
  // The latest point is always named: the label furthest right is the last row's day.
  const rightmost = chart.labels.reduce((a, b) => (b.left > a.left ? b : a));
  assert.match(
    chart.lastRow,
    new RegExp(`^${rightmost.text}([ ,]|$)`),
    `${where}, ${chart.title}: the last label is "${rightmost.text}", the last point "${chart.lastRow}"`,
  );
  if (counts) {
    const ticks = chart.values.map((value) => value.text);
    assert.ok(ticks.length >= 2, `${where}, ${chart.title}: ${ticks}`);
    for (const tick of ticks) assert.match(tick, WHOLE, `${where}, ${chart.title}: tick "${tick}"`);
    const numbers = ticks.map((tick) => Number(tick.replaceAll(',', '')));
    assert.deepEqual(
      numbers,
      [...new Set(numbers)].sort((a, b) => a - b),
      `${where}, ${chart.title}: ticks rise`,
    );
  }
}

const COUNT_TITLES =
  /^(Verifications|New device activations|Licenses|Active licenses|New users|Users in total)/;

/** Cards grouped by row: no row holds one card unless that card fills the row. */
async function assertNoCardAlone(page: Page, where: string) {
  const { list, cards } = (await page.evaluate(READ_CARDS)) as {
    list: { width: number };
    cards: { top: number; left: number; width: number }[];
  };
  const rows = new Map<number, typeof cards>();
  for (const card of cards) rows.set(card.top, [...(rows.get(card.top) ?? []), card]);
  assert.ok(cards.length >= 6, `${where}: ${cards.length} cards`);
  for (const row of rows.values()) {
    if (row.length === 1)
      assert.ok(
        Math.abs((row[0]?.width ?? 0) - list.width) <= 1,
        `${where}: a card sits alone on a row (${[...rows.values()].map((r) => r.length).join(' + ')})`,
      );
  }
  assert.ok(
    [...rows.values()].some((row) => row.length >= 2) || list.width < 300,
    `${where}: cards side by side where there is room`,
  );
}

describe('charts and cards at a phone’s width and a desktop’s', () => {
  test('30- and 90-day overview charts: no label overlaps another, counts mark whole numbers', async (t) => {
    for (const viewport of [PHONE, DESKTOP]) {
      const page = await openSignedIn(t, twoCurrencies, viewport);
      const where = `${viewport.width} px`;
      // Revenue per day in two currencies, per month in two, verifications and activations.
      await showCharts(page, '#/overview', 6, 30);
      const charts = await drawnCharts(page);
      assert.deepEqual(
        charts.map((chart) => chart.points),
        [30, 30, 12, 12, 30, 30],
      );
      for (const chart of charts) assertReadable(chart, where, COUNT_TITLES.test(chart.title));
      const activations = charts.find((chart) => chart.title.startsWith('New device activations'));
      assert.deepEqual(
        activations?.values.map((value) => value.text),
        ['0', '1'],
        'one activation: an axis of 0 and 1',
      );
      await screenshot(page, `charts-overview-${viewport.width}`);

      await showCharts(page, '#/overview?days=90', 6, 90);
      const long = await drawnCharts(page);
      assert.deepEqual(
        long.map((chart) => chart.points),
        [90, 90, 12, 12, 90, 90],
      );
      for (const chart of long) assertReadable(chart, `${where}, 90 days`, COUNT_TITLES.test(chart.title));
    }
  });

  test('the admin analytics charts of 30 days: no label overlaps another, counts mark whole numbers', async (t) => {
    for (const viewport of [PHONE, DESKTOP]) {
      const page = await openSignedIn(t, admin, viewport);
      // Revenue in two currencies, licenses, active licenses, verifications, new users, users.
      await showCharts(page, '#/admin/analytics', 7, 30);
      const charts = await drawnCharts(page);
      assert.ok(charts.every((chart) => chart.points === 30));
      for (const chart of charts)
        assertReadable(chart, `${viewport.width} px`, COUNT_TITLES.test(chart.title));
      await screenshot(page, `charts-analytics-${viewport.width}`);
    }
  });

  test('no card sits alone on a row, with six cards, seven, or the analytics totals', async (t) => {
    for (const viewport of [PHONE, TABLET, DESKTOP]) {
      for (const [seller, count] of [
        [oneCurrency, 6],
        [twoCurrencies, 7],
      ] as const) {
        const page = await openSignedIn(t, seller, viewport);
        await page
          .locator('li.card')
          .nth(count - 1)
          .waitFor();
        assert.equal(await page.locator('li.card').count(), count);
        await assertNoCardAlone(page, `${viewport.width} px, ${count} cards`);
        assert.equal(
          await page.evaluate('document.documentElement.scrollWidth - window.innerWidth'),
          0,
          `${viewport.width} px, ${count} cards: the page overflows`,
        );
        if (viewport === DESKTOP) await screenshot(page, `cards-overview-${count}`);
        await page.context().close();
      }
      const page = await openSignedIn(t, admin, viewport);
      await page.evaluate(`location.hash = '#/admin/analytics'`);
      await page
        .locator('li.card')
        .filter({ hasText: /^Revenue in USD/ })
        .waitFor();
      await assertNoCardAlone(page, `${viewport.width} px, analytics`);
    }
  });
});
