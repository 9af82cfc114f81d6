import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { accentColours, contrastRatio, READABLE_CONTRAST } from './accent.js';

describe('colours drawn from an accent', () => {
  test('contrast as WCAG 2 defines it', () => {
    assert.equal(contrastRatio('#000000', '#ffffff'), 21);
    assert.equal(contrastRatio('#777777', '#777777'), 1);
    assert.equal(contrastRatio('#ffffff', '#777777').toFixed(2), '4.48');
  });

  for (const [accent, onAccent, ink] of [
    ['#3A4BDB', '#ffffff', '#3a4bdb'],
    ['#ffd400', '#000000', '#8c7500'],
    ['#ffffff', '#000000', '#757575'],
    ['#000000', '#ffffff', '#000000'],
    ['#00ff00', '#000000', '#008a00'],
    ['#777777', '#000000', '#767676'],
  ] as const) {
    test(`${accent}: ${onAccent} text on it, ${ink} as text on white`, () => {
      const colours = accentColours(accent);
      assert.deepEqual(colours, { accent: accent.toLowerCase(), onAccent, ink });
      assert.ok(contrastRatio(colours.accent, colours.onAccent) >= READABLE_CONTRAST);
      assert.ok(contrastRatio(colours.ink, '#ffffff') >= READABLE_CONTRAST);
    });
  }

  test('every accent gets readable text on it and a readable ink', () => {
    for (let value = 0; value < 0x1000000; value += 0x0f0f0f) {
      const colours = accentColours(`#${value.toString(16).padStart(6, '0')}`);
      assert.ok(contrastRatio(colours.accent, colours.onAccent) >= READABLE_CONTRAST, colours.accent);
      assert.ok(contrastRatio(colours.ink, '#ffffff') >= READABLE_CONTRAST, colours.accent);
    }
  });
});
