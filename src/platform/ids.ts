import { getRandomValues } from 'node:crypto';
import { v7 } from 'uuid';

/** Ids drawn from one fill of the random pool. */
const POOL_IDS = 256;
const pool = new Uint8Array(16 * POOL_IDS);
let drawn = POOL_IDS;
/** The last id's time and counter, so ids made within one millisecond still sort in order. */
const last = { msecs: Number.NEGATIVE_INFINITY, seq: 0 };

/**
 * Every record id comes from here: UUIDv7, so ids sort by creation time and lists can use
 * (created_at, id) as a stable order without a second sequence.
 *
 * `uuid` draws 16 random bytes from the system for each id, which was a visible share of a
 * webhook delivery (ids for the delivery and its attempt). Here they come from a pool filled
 * every POOL_IDS ids, and the time and counter are kept as `uuid` keeps them when it draws
 * its own bytes (its `random` option switches that off): a new millisecond starts the counter
 * from random bits, within one it counts up.
 */
export function newId(): string {
  if (drawn === POOL_IDS) {
    getRandomValues(pool);
    drawn = 0;
  }
  const random = pool.subarray(16 * drawn, 16 * ++drawn);
  const now = Date.now();
  if (now > last.msecs) {
    last.msecs = now;
    last.seq =
      (((random[6] as number) & 0x7f) << 24) |
      ((random[7] as number) << 16) |
      ((random[8] as number) << 8) |
      (random[9] as number);
  } else {
    last.seq = (last.seq + 1) | 0;
    if (last.seq === 0) last.msecs++;
  }
  return v7({ random, msecs: last.msecs, seq: last.seq });
}
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}
