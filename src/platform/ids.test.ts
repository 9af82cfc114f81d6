import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isUuid, newId } from './ids.js';

test('ids are UUIDv7, unique, and sort in the order they were made, within a millisecond too', () => {
  // More than one fill of the random pool, made faster than the clock ticks.
  const ids = Array.from({ length: 5_000 }, () => newId());
  assert.ok(ids.every((id) => isUuid(id) && id[14] === '7' && '89ab'.includes(id[19] as string)));
  assert.equal(new Set(ids).size, ids.length);
  assert.deepEqual([...ids].sort(), ids);
  const first = ids[0] as string;
  const last = ids.at(-1) as string;
  // The first 48 bits are the time in milliseconds.
  const msOf = (id: string) => Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
  assert.ok(Math.abs(msOf(first) - Date.now()) < 60_000);
  assert.ok(msOf(last) >= msOf(first));
});
