import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { askNewPassword, PasswordNotGiven } from './password-prompt.js';

const LENGTH = { min: 8, max: 256 };

/**
 * A terminal as readline sees one (isTTY), with a person at it: each answer is typed once the
 * question before it has been shown, and everything shown is kept.
 */
function fakeTerminal(answers: string[]) {
  const input = Object.assign(new PassThrough(), { isTTY: true });
  const output = new PassThrough();
  let shown = '';
  output.on('data', (chunk: Buffer) => {
    shown += chunk;
    if (/(Password|Password again): $/.test(shown)) {
      const answer = answers.shift();
      if (answer === undefined) input.end();
      else input.write(answer);
    }
  });
  return { terminal: { input, output }, shown: () => shown };
}

describe('the hidden password prompt', () => {
  test('asks twice and answers the password, showing the questions and nothing of what is typed', async () => {
    const { terminal, shown } = fakeTerminal(['correct horse\r', 'correct horse\r']);
    assert.equal(await askNewPassword(terminal, LENGTH), 'correct horse');
    assert.equal(shown(), 'Password: \nPassword again: \n');
  });

  test('a confirmation that differs asks again from the start', async () => {
    const { terminal, shown } = fakeTerminal([
      'first try!\n',
      'first typo!\n',
      'second try\n',
      'second try\n',
    ]);
    assert.equal(await askNewPassword(terminal, LENGTH), 'second try');
    assert.equal(
      shown(),
      'Password: \nPassword again: \nThe two passwords differ.\nPassword: \nPassword again: \n',
    );
  });

  test('a password out of bounds is refused before the confirmation', async () => {
    const { terminal, shown } = fakeTerminal(['short\n', 'long enough\n', 'long enough\n']);
    assert.equal(await askNewPassword(terminal, LENGTH), 'long enough');
    assert.match(shown(), /^Password: \nThe password must have 8 to 256 characters\.\nPassword: \n/);
  });

  test('gives up after three attempts that differ', async () => {
    const answers = ['aaaaaaaa\n', 'bbbbbbbb\n'];
    const { terminal, shown } = fakeTerminal([...answers, ...answers, ...answers]);
    await assert.rejects(askNewPassword(terminal, LENGTH), PasswordNotGiven);
    assert.equal(shown().match(/The two passwords differ\./g)?.length, 3);
    assert.doesNotMatch(shown(), /aaaa|bbbb|\*/);
  });

  test('ends without a password when the input ends (Ctrl-D) or Ctrl-C is pressed', async () => {
    const ended = fakeTerminal([]);
    await assert.rejects(askNewPassword(ended.terminal, LENGTH), /no password given/);
    const interrupted = fakeTerminal(['half typed\u0003']);
    await assert.rejects(askNewPassword(interrupted.terminal, LENGTH), /no password given/);
  });
});
