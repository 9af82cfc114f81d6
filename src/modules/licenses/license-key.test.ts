import assert from 'node:assert/strict';
import { test } from 'node:test';
import { generateLicenseKey, normalizeLicenseKey } from './license-key.js';

test('reads a key however a person typed it, and refuses what cannot be one', () => {
  const key = 'ABCDE-FGHJK-MNPQR-STVWX-YZ012-34567';
  const cases: [string, string | null][] = [
    [key, key],
    ['abcde-fghjk-mnpqr-stvwx-yz012-34567', key],
    ['ABCDEFGHJKMNPQRSTVWXYZ01234567', key],
    [' ABCDE FGHJK MNPQR STVWX YZ012 34567 ', key],
    ['ABCDE-FGHJK-MNPQR-STVWX-YZ0I2-345L7', 'ABCDE-FGHJK-MNPQR-STVWX-YZ012-34517'],
    ['0BCDE-FGHJK-MNPQR-STVWX-YZ012-3456O', '0BCDE-FGHJK-MNPQR-STVWX-YZ012-34560'],
    ['ABCDE-FGHJK-MNPQR-STVWX-YZ012-3456U', null],
    ['ABCDE-FGHJK-MNPQR-STVWX-YZ012-3456', null],
    ['ABCDE-FGHJK-MNPQR-STVWX-YZ012-345678', null],
    ['ABCDE_FGHJK_MNPQR_STVWX_YZ012_34567', null],
    ['', null],
  ];
  for (const [typed, canonical] of cases) assert.equal(normalizeLicenseKey(typed), canonical, typed);
});

test('every generated key is already in its canonical form', () => {
  for (let i = 0; i < 200; i++) {
    const key = generateLicenseKey();
    assert.match(key, /^[0-9A-HJKMNP-TV-Z]{5}(-[0-9A-HJKMNP-TV-Z]{5}){5}$/);
    assert.equal(normalizeLicenseKey(key), key);
  }
});
