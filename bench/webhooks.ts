import { request } from 'undici';
import { startTestServer } from '../src/testing/harness.js';
import { startReceiver } from '../src/testing/receiver.js';
import { AS_IN_PRODUCTION } from './lib.js';

/**
 * Webhook delivery: how soon after a change commits its event reaches a local receiver, and how
 * many deliveries a second one endpoint gets, beside the same number of plain sequential POSTs
 * to that receiver measured in the same run.
 */
export async function webhookDelivery(): Promise<string> {
  const receiver = await startReceiver();
  const server = await startTestServer({ ...AS_IN_PRODUCTION, JOBS: 'on' });
  try {
    const api = server.api;
    const { token } = (
      await api.post('/auth/register', {
        email: `bench-hooks-${Date.now()}@example.com`,
        password: 'benchmark password',
      })
    ).expect(201).body;
    const app = (await api.post('/apps', { name: 'Bench' }, { token })).expect(201).body;
    (
      await api.post('/webhooks', { url: `${receiver.url}/bench`, events: ['license.created'] }, { token })
    ).expect(201);

    // Latency: one change at a time, waiting for its delivery.
    const delays: number[] = [];
    for (let i = 0; i < 30; i++) {
      const seen = receiver.requests.length;
      await api.post(`/apps/${app.id}/licenses`, {}, { token });
      const committed = performance.now();
      await receiver.waitFor(seen + 1);
      delays.push(performance.now() - committed);
    }
    delays.sort((a, b) => a - b);

    // Throughput: a burst of events, then the time until all are delivered.
    const burst = 300;
    const before = receiver.requests.length;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: burst }, () => api.post(`/apps/${app.id}/licenses`, {}, { token })),
    );
    await receiver.waitFor(before + burst);
    const perSecond = Math.round(burst / ((performance.now() - started) / 1000));

    // Baseline: the same number of sequential POSTs straight to the receiver.
    const body = receiver.requests.at(-1)?.body ?? '{}';
    const baselineStart = performance.now();
    for (let i = 0; i < burst; i++) {
      const res = await request(`${receiver.url}/baseline`, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json' },
      });
      await res.body.dump();
    }
    const baseline = Math.round(burst / ((performance.now() - baselineStart) / 1000));

    const storage = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite';
    const at = (q: number) =>
      Math.round(delays[Math.min(delays.length - 1, Math.floor(q * delays.length))] ?? 0);
    return [
      `### Webhook delivery (${storage})`,
      '',
      '| measure | value | ratio to baseline |',
      '|---|---:|---:|',
      `| plain sequential POSTs to the receiver (baseline) | ${baseline}/s | 1.00 |`,
      `| deliveries to one endpoint (${burst} events, issued together) | ${perSecond}/s | ${(perSecond / baseline).toFixed(2)} |`,
      `| commit to first attempt, median | ${at(0.5)} ms | |`,
      `| commit to first attempt, p95 | ${at(0.95)} ms | |`,
    ].join('\n');
  } finally {
    await server.stop();
    await receiver.close();
  }
}
