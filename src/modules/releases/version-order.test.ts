import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import semver from 'semver';
import { parseVersion } from './version-order.js';

describe('version order', () => {
  test('sorts as semantic versioning orders, pre-releases and large numbers included', () => {
    // The example of semver.org's §11, and the corners a byte order gets wrong.
    const versions = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '1.0.1-a.b',
      '1.0.1-a-b',
      '1.0.1',
      '1.2.0',
      '1.10.0',
      '2.0.0',
      '10.0.0',
      `${Number.MAX_SAFE_INTEGER}.0.0`,
    ];
    const shuffled = [...versions].reverse().sort((a, b) => a.localeCompare(b));
    const byOrder = shuffled.sort((a, b) => {
      const x = parseVersion(a)?.order as string;
      const y = parseVersion(b)?.order as string;
      return x < y ? -1 : x > y ? 1 : 0;
    });
    assert.deepEqual(byOrder, [...versions].sort(semver.compare));
    assert.deepEqual(byOrder, versions);
  });

  test('forgives a leading v, keeps build metadata out of the order, and names the implied channel', () => {
    assert.deepEqual(parseVersion('v1.2.3'), {
      version: '1.2.3',
      order: parseVersion('1.2.3')?.order,
      impliedChannel: 'stable',
    });
    assert.equal(parseVersion('1.2.3+linux.x64')?.version, '1.2.3+linux.x64');
    assert.equal(parseVersion('1.2.3+linux')?.order, parseVersion('1.2.3')?.order);
    assert.equal(parseVersion('2.0.0-rc.1')?.impliedChannel, 'rc');
    assert.equal(parseVersion('2.0.0-beta2')?.impliedChannel, 'beta');
    assert.equal(parseVersion('2.0.0-nightly.5')?.impliedChannel, null);
    for (const bad of ['', '1', '1.2', '01.2.3', '1.2.3-', 'one.two.three', '1.2.3 4']) {
      assert.equal(parseVersion(bad), null, bad);
    }
  });
});
