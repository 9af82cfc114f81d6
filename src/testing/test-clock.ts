import type { Clock } from '../platform/clock.js';

/** A clock tests move by hand, so time-based rules are proven without sleeping. */
export interface TestClock extends Clock {
  set(at: Date | string): void;
  advance(ms: number): void;
}

export function testClock(start: Date | string = '2026-01-01T00:00:00.000Z'): TestClock {
  let now = new Date(start).getTime();
  return {
    now: () => new Date(now),
    set: (at) => {
      now = new Date(at).getTime();
    },
    advance: (ms) => {
      now += ms;
    },
  };
}
