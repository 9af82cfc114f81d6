import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../config.js';
import { createLog } from '../log.js';
import { createHttpApp, requestsDrained } from './create-http-app.js';

test('shutdown waits for a handler whose client has hung up', async () => {
  const app = createHttpApp({ log: createLog(parseConfig({ LOG_LEVEL: 'silent' })) });
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  let started!: () => void;
  const handlerStarted = new Promise<void>((resolve) => {
    started = resolve;
  });
  let finished = false;
  app.get('/work', {
    config: { auth: 'public' },
    handler: async () => {
      started();
      await released;
      finished = true;
      return { done: true };
    },
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };

  const client = new AbortController();
  const call = fetch(`http://127.0.0.1:${port}/work`, { signal: client.signal }).catch(() => 'aborted');
  await handlerStarted;
  client.abort();
  assert.equal(await call, 'aborted');
  await app.close();

  let drained = false;
  const draining = requestsDrained(app).then(() => {
    drained = true;
  });
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(drained, false, 'the drain waits while the handler runs');
  release();
  await draining;
  assert.equal(finished, true);
});
