import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';

/** Where a question is asked: typed lines come from `input`, the questions go to `output`. */
export interface Terminal {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
}

/** No password was given: the input ended, Ctrl-C was pressed, or every attempt failed. */
export class PasswordNotGiven extends Error {}

/**
 * Asks for a new password twice without echoing it: readline reads the terminal in raw mode and
 * writes its echo to a stream that drops it, so neither the password nor its length shows (no
 * asterisks either). A password out of bounds, or a confirmation that differs, asks again, up to
 * `attempts` times.
 */
export async function askNewPassword(
  terminal: Terminal,
  length: { min: number; max: number },
  attempts = 3,
): Promise<string> {
  const dropEcho = new Writable({ write: (_chunk, _encoding, done) => done() });
  // No history: a terminal interface otherwise keeps every line typed, the password with them.
  const reader = createInterface({ input: terminal.input, output: dropEcho, terminal: true, historySize: 0 });
  // In raw mode Ctrl-C reaches readline as a key, not as a signal: it ends the questions.
  reader.on('SIGINT', () => reader.close());
  const lines = reader[Symbol.asyncIterator]();
  const ask = async (question: string): Promise<string> => {
    terminal.output.write(question);
    const typed = await lines.next();
    terminal.output.write('\n');
    if (typed.done) throw new PasswordNotGiven('no password given');
    return typed.value;
  };
  try {
    for (let attempt = 1; attempt <= attempts; attempt++) {
      const password = await ask('Password: ');
      if (password.length < length.min || password.length > length.max) {
        terminal.output.write(`The password must have ${length.min} to ${length.max} characters.\n`);
        continue;
      }
      if ((await ask('Password again: ')) === password) return password;
      terminal.output.write('The two passwords differ.\n');
    }
    throw new PasswordNotGiven(`no password set after ${attempts} attempts`);
  } finally {
    reader.close();
  }
}
