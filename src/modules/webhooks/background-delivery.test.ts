import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createApp, signUp, startTestServer, type TestServer } from '../../testing/harness.js';
import { type Receiver, startReceiver } from '../../testing/receiver.js';

/** With its jobs running, a node delivers events by itself, soon after the change commits. */
let server: TestServer;
let receiver: Receiver;
before(async () => {
  server = await startTestServer({ JOBS: 'on' }, { ownDatabase: true });
  receiver = await startReceiver();
});
after(async () => {
  await server.stop();
  await receiver.close();
});

test('a recorded event reaches the receiver without anyone driving the worker', async () => {
  const seller = await signUp(server);
  (
    await server.api.post(
      '/webhooks',
      { url: `${receiver.url}/bg`, events: ['app.created'] },
      { token: seller.token },
    )
  ).expect(201);
  const app = await createApp(server, seller.token, 'Background');
  const [request] = await receiver.waitFor(1);
  assert.equal(request?.json.type, 'app.created');
  assert.equal(request?.json.data.id, app.id);
});
