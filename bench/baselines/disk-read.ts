import fs from 'node:fs';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/**
 * Beside D1: the file read straight from disk (the page cache, after the first read) with
 * fs.createReadStream, `times` times in turn, every byte read and dropped: the most any server
 * could send it. Prints what fetch-file.ts prints. Input (argv[2], JSON): { path, times, size }.
 */
const { path, times, size } = JSON.parse(process.argv[2] as string) as {
  path: string;
  times: number;
  size: number;
};

const cpu = process.cpuUsage();
const started = performance.now();
let bytes = 0;
for (let i = 0; i < times; i++) {
  let read = 0;
  await pipeline(
    fs.createReadStream(path),
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        read += chunk.length;
        done();
      },
    }),
  );
  if (read !== size) throw new Error(`read ${read} bytes of ${size}`);
  bytes += read;
}
const seconds = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
console.log(
  JSON.stringify({
    bytesPerSecond: bytes / seconds,
    bytes,
    seconds,
    cpuUsPerMegabyte: (used.user + used.system) / (bytes / 1e6),
  }),
);
