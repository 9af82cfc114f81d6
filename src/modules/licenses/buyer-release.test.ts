import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { releaseAllowance } from './buyer-release.js';

const DAY = 86_400_000;
const now = new Date('2026-03-01T12:00:00.000Z');
const daysAgo = (days: number) => new Date(now.getTime() - days * DAY);
const daysAhead = (days: number) => new Date(now.getTime() + days * DAY);

describe('the buyer’s release allowance', () => {
  const cases: [
    label: string,
    product: { portal_device_releases: number | null; portal_release_period_days: number | null },
    releases: Date[],
    expected: { allowed: number; periodDays: number; left: number; nextReleaseAt: Date | null },
  ][] = [
    [
      'no product: 3 in any 30 days',
      { portal_device_releases: null, portal_release_period_days: null },
      [],
      { allowed: 3, periodDays: 30, left: 3, nextReleaseAt: null },
    ],
    [
      'releases older than the period do not count',
      { portal_device_releases: 2, portal_release_period_days: 10 },
      [daysAgo(10), daysAgo(11), daysAgo(2)],
      { allowed: 2, periodDays: 10, left: 1, nextReleaseAt: null },
    ],
    [
      'used up: the oldest release in the period gives the next one back',
      { portal_device_releases: 2, portal_release_period_days: 10 },
      [daysAgo(1), daysAgo(4)],
      { allowed: 2, periodDays: 10, left: 0, nextReleaseAt: daysAhead(6) },
    ],
    [
      'an allowance lowered below the releases made waits for enough of them to age out',
      { portal_device_releases: 1, portal_release_period_days: 10 },
      [daysAgo(5), daysAgo(3), daysAgo(1)],
      { allowed: 1, periodDays: 10, left: 0, nextReleaseAt: daysAhead(9) },
    ],
    [
      'none allowed: never, whatever the releases',
      { portal_device_releases: 0, portal_release_period_days: 30 },
      [],
      { allowed: 0, periodDays: 30, left: 0, nextReleaseAt: null },
    ],
  ];
  for (const [label, product, releases, expected] of cases) {
    test(label, () => assert.deepEqual(releaseAllowance(product, releases, now), expected));
  }
});
