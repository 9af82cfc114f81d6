import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { processStorage, serve } from '../testing/cli-process.js';

/**
 * Tracing for real: the service in a child process, exporting over OTLP/HTTP (JSON) to a
 * collector this test runs on loopback.
 */
interface Span {
  name: string;
  kind: number;
  attributes: { key: string; value: Record<string, unknown> }[];
}

const SPAN_KIND_SERVER = 2;

let collector: http.Server;
let collectorUrl: string;
const spans: Span[] = [];
const exportPaths: string[] = [];
let changed = () => {};

before(async () => {
  collector = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      exportPaths.push(req.url ?? '');
      if (req.url === '/v1/traces' && req.headers['content-type']?.startsWith('application/json')) {
        const payload = JSON.parse(body) as {
          resourceSpans: { scopeSpans: { spans: Span[] }[] }[];
        };
        for (const resource of payload.resourceSpans)
          for (const scope of resource.scopeSpans) spans.push(...scope.spans);
        changed();
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  collectorUrl = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => collector.close(() => resolve())));

const attribute = (span: Span, key: string) => span.attributes.find((a) => a.key === key)?.value.stringValue;

/** The first span that matches, once the collector has it; a failure, not a wait, after 60 s. */
function spanArrives(match: (span: Span) => boolean): Promise<Span> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      changed = () => {};
      reject(
        new Error(`no such span arrived within 60 s; spans seen: ${spans.map((s) => s.name).join(', ')}`),
      );
    }, 60_000);
    const check = () => {
      const found = spans.find(match);
      if (found) {
        clearTimeout(timer);
        resolve(found);
      } else changed = check;
    };
    check();
  });
}

describe('tracing', () => {
  test('with OTEL_EXPORTER_OTLP_ENDPOINT set, a verify call arrives as a span of its route', async () => {
    const storage = await processStorage();
    const { proc, api } = await serve({
      DATABASE_URL: storage.DATABASE_URL,
      DATA_DIR: await storage.migratedDataDir(),
      JOBS: 'off',
      OTEL_EXPORTER_OTLP_ENDPOINT: collectorUrl,
      // Spans leave in batches; a short delay keeps the test quick.
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    const res = await fetch(`${api}/v1/licenses/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'NO-SUCH-KEY' }),
    });
    assert.equal(res.status, 200);
    const span = await spanArrives(
      (s) => s.kind === SPAN_KIND_SERVER && attribute(s, 'http.route') === '/v1/licenses/verify',
    );
    // The server span of the request, named by the route's pattern (not the raw path).
    assert.equal(span.name, 'POST /v1/licenses/verify');
    assert.equal(span.kind, SPAN_KIND_SERVER);
    if (storage.DATABASE_URL) {
      // The unknown key was looked up in PostgreSQL: its statement is traced too.
      await spanArrives((s) => s.attributes.some((a) => a.key === 'db.system' || a.key === 'db.system.name'));
    }
    proc.child.kill('SIGTERM');
    assert.equal(await proc.exited, 0);
  });

  test('without it nothing is exported', async () => {
    const storage = await processStorage();
    const before = exportPaths.length;
    const { proc, api } = await serve({
      DATABASE_URL: storage.DATABASE_URL,
      DATA_DIR: await storage.migratedDataDir(),
      JOBS: 'off',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    const res = await fetch(`${api}/v1/licenses/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: 'NO-SUCH-KEY' }),
    });
    assert.equal(res.status, 200);
    proc.child.kill('SIGTERM');
    assert.equal(await proc.exited, 0);
    assert.equal(exportPaths.length, before);
  });
});
