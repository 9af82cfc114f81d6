import http from 'node:http';

/**
 * The downloading client, in a process of its own: GETs one URL `times` times in turn over one
 * kept-alive connection, reading every byte and keeping none, as an updater saving to a fast disk
 * would. Prints one JSON line: bytes a second over the whole run, and this process's own CPU a
 * megabyte (every thread, µs). Input (argv[2], JSON): { url, times, size }: a download that is
 * not 200 or not `size` bytes fails the run.
 */
export interface FetchInput {
  url: string;
  times: number;
  size: number;
}

export interface FetchResult {
  bytesPerSecond: number;
  bytes: number;
  seconds: number;
  cpuUsPerMegabyte: number;
}

const { url, times, size } = JSON.parse(process.argv[2] as string) as FetchInput;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function once(): Promise<number> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        let received = 0;
        res.on('data', (chunk: Buffer) => {
          received += chunk.length;
        });
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`${url} answered ${res.statusCode}`));
          else if (received !== size) reject(new Error(`${url} sent ${received} bytes of ${size}`));
          else resolve(received);
        });
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

const cpu = process.cpuUsage();
const started = performance.now();
let bytes = 0;
for (let i = 0; i < times; i++) bytes += await once();
const seconds = (performance.now() - started) / 1000;
const used = process.cpuUsage(cpu);
agent.destroy();
const result: FetchResult = {
  bytesPerSecond: bytes / seconds,
  bytes,
  seconds,
  cpuUsPerMegabyte: (used.user + used.system) / (bytes / 1e6),
};
console.log(JSON.stringify(result));
