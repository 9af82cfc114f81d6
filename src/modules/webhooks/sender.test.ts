import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, test } from 'node:test';
import { createSender, DELIVERY_TIMEOUT_MS, LOCAL_LAG_ALLOWANCE_MS } from './sender.js';

/**
 * A receiver in a process of its own, answering 200 after half a second: it answers on time
 * however long this process's event loop is held.
 */
let receiver: ChildProcess;
let url: string;
before(async () => {
  receiver = spawn(
    process.execPath,
    [
      '-e',
      `require('node:http').createServer((q, s) => { q.resume(); q.on('end', () => setTimeout(() => s.end('ok'), 500)); })
        .listen(0, '127.0.0.1', function () { console.log(this.address().port); });`,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [port] = (await once(receiver.stdout as NodeJS.ReadableStream, 'data')) as [Buffer];
  url = `http://127.0.0.1:${port.toString().trim()}/hook`;
});
after(() => {
  receiver.kill();
});

test('an answer that arrived while the node was stalled past the deadline is not a timeout', async () => {
  const sender = createSender({ allowPrivate: true, requireHttps: false }, { now: () => new Date() });
  try {
    const event = {
      id: 'e1',
      type: 'license.created',
      data: {},
      timestamp: new Date().toISOString(),
      signature: '',
    };
    const sending = sender.send(url, 'secret', event, 'core');
    // The request leaves on the next turn; hold the loop once it has, past the whole deadline.
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Held in a turn's last phase, so the next turn starts with the deadline's timer due and the
    // answer waiting in the socket: the node was busy, the receiver was on time.
    await new Promise<void>((resolve) =>
      setImmediate(() => {
        const until = Date.now() + DELIVERY_TIMEOUT_MS + LOCAL_LAG_ALLOWANCE_MS + 500;
        while (Date.now() < until) {}
        resolve();
      }),
    );
    const result = await sending;
    assert.equal(result.timedOut, false, result.error ?? '');
    assert.equal(result.statusCode, 200);
    assert.equal(result.success, true);
  } finally {
    await sender.close();
  }
});
