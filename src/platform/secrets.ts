import { hash, timingSafeEqual } from 'node:crypto';

/**
 * Whether a presented secret equals the stored one, in constant time. Both are hashed first, so
 * the comparison's time says nothing of either length; an empty stored secret never matches.
 */
export function sameSecret(expected: string, given: string): boolean {
  const digest = (value: string) => hash('sha256', value, 'buffer');
  return timingSafeEqual(digest(expected), digest(given)) && expected.length > 0;
}
