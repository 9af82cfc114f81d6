import fs from 'node:fs';
import http from 'node:http';

/**
 * Baseline of D1: a bare node:http server answering every GET with the file FILE, streamed by
 * fs.createReadStream (64 KiB reads, as @fastify/send reads) with its length and no other work:
 * no routing, no logging, no link check, no database.
 */
const file = process.env.FILE as string;
const size = fs.statSync(file).size;
const server = http.createServer((_request, response) => {
  response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': size });
  fs.createReadStream(file).pipe(response);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  const address = server.address() as { port: number };
  console.log(`listening on http://127.0.0.1:${address.port}/`);
});
