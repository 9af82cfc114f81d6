import fs from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

/**
 * A webhook receiver in its own process, over TLS (production sends webhooks to https only):
 * answers every POST 200 and counts them by path with the wall-clock times of the first and last.
 * Under a path that starts with /each/, it also keeps when each delivery first arrived, by its
 * X-Webhook-Id (the event's id). GET /stats answers those counts. Key and certificate come from
 * TLS_KEY and TLS_CERT (files).
 */
export type ReceiverStats = Record<
  string,
  { count: number; firstAt: number; lastAt: number; arrivals?: Record<string, number> }
>;

const stats: ReceiverStats = {};
const server = https.createServer(
  {
    key: fs.readFileSync(process.env.TLS_KEY as string),
    cert: fs.readFileSync(process.env.TLS_CERT as string),
  },
  (req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(JSON.stringify(stats));
      }
      const now = Date.now();
      const path = req.url ?? '/';
      const seen = stats[path] ?? { count: 0, firstAt: now, lastAt: now };
      stats[path] = seen;
      seen.count++;
      seen.lastAt = now;
      const id = req.headers['x-webhook-id'];
      if (path.startsWith('/each/') && typeof id === 'string') {
        seen.arrivals ??= {};
        seen.arrivals[id] ??= now;
      }
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end('ok');
    });
  },
);
server.listen(0, '127.0.0.1', () => {
  console.log(`listening on https://127.0.0.1:${(server.address() as AddressInfo).port}`);
});
