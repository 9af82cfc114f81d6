import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MAX_ATTEMPTS, nextAttemptDelay, parseRetryAfter } from './retry-schedule.js';

const plain = { statusCode: 500, timedOut: false, retryAfterMs: null };
const middle = () => 0.5;

describe('retry schedule', () => {
  test('follows the documented delays over about three days, then gives up', () => {
    const delays = Array.from({ length: MAX_ATTEMPTS }, (_, i) => nextAttemptDelay(i + 1, plain, middle));
    assert.deepEqual(delays, [
      5_000,
      300_000,
      1_800_000,
      7_200_000,
      18_000_000,
      36_000_000,
      50_400_000,
      72_000_000,
      86_400_000,
      null,
    ]);
    const total = delays.reduce<number>((sum, d) => sum + (d ?? 0), 0);
    assert.ok(total > 2.9 * 86_400_000 && total < 3.3 * 86_400_000, `${total / 86_400_000} days`);
  });

  test('spreads each delay by at most 10% either way', () => {
    assert.equal(
      nextAttemptDelay(2, plain, () => 0),
      270_000,
    );
    assert.equal(
      nextAttemptDelay(2, plain, () => 1),
      330_000,
    );
  });

  const slow: [string, object][] = [
    ['429', { statusCode: 429 }],
    ['502', { statusCode: 502 }],
    ['504', { statusCode: 504 }],
    ['a timeout', { statusCode: 0, timedOut: true }],
  ];
  for (const [label, outcome] of slow) {
    test(`${label} waits at least a minute`, () => {
      assert.equal(nextAttemptDelay(1, { ...plain, ...outcome }, middle), 60_000);
    });
  }

  test('honours Retry-After within bounds', () => {
    assert.equal(nextAttemptDelay(1, { ...plain, statusCode: 429, retryAfterMs: 120_000 }, middle), 120_000);
    assert.equal(
      nextAttemptDelay(1, { ...plain, statusCode: 503, retryAfterMs: 30 * 86_400_000 }, middle),
      86_400_000,
    );
    assert.equal(nextAttemptDelay(3, { ...plain, statusCode: 503, retryAfterMs: 1_000 }, middle), 1_800_000);
  });

  test('reads Retry-After as seconds or a date', () => {
    const now = new Date('2030-01-01T00:00:00Z');
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter('Tue, 01 Jan 2030 00:02:00 GMT', now), 120_000);
    assert.equal(parseRetryAfter('soon', now), null);
    assert.equal(parseRetryAfter(null, now), null);
  });
});
