import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type CsvValue, csvCell, csvLine } from './csv.js';

describe('CSV cells', () => {
  const cases: [CsvValue, string][] = [
    ['plain', 'plain'],
    ['', ''],
    [null, ''],
    [42, '42'],
    [-5, '-5'],
    [19.99, '19.99'],
    [true, 'true'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['cr\rhere', '"cr\rhere"'],
    ['=1+1', "'=1+1"],
    ['+1', "'+1"],
    ['-1', "'-1"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['\tindent', "'\tindent"],
    ['\rstart', `"'\rstart"`],
    ['=HYPERLINK("x")', `"'=HYPERLINK(""x"")"`],
    ['a=b', 'a=b'],
    ['ünïcode ✓', 'ünïcode ✓'],
  ];
  for (const [value, written] of cases) {
    test(`writes ${JSON.stringify(value)} as ${JSON.stringify(written)}`, () => {
      assert.equal(csvCell(value), written);
    });
  }

  test('ends every line with CRLF', () => {
    assert.equal(csvLine(['a', null, 1, 'b,c']), 'a,,1,"b,c"\r\n');
  });
});
