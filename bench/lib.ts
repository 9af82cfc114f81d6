import autocannon from 'autocannon';

/**
 * Settings that make a test server measure like a production node: quiet logs and no response
 * contract check (tests enforce it; production leaves it off).
 */
export const AS_IN_PRODUCTION = { LOG_LEVEL: 'warn', RESPONSE_CONTRACT: 'off' } as const;

/** One measured scenario: requests per second and latency, from a fixed-duration autocannon run. */
export interface Measurement {
  name: string;
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
}

export async function measure(
  name: string,
  request: { url: string; method?: 'GET' | 'POST'; headers?: Record<string, string>; body?: string },
  options: { seconds?: number; connections?: number } = {},
): Promise<Measurement> {
  const result = await autocannon({
    url: request.url,
    method: request.method ?? 'GET',
    headers: request.headers,
    body: request.body,
    connections: options.connections ?? 10,
    duration: options.seconds ?? Number(process.env.BENCH_SECONDS ?? 3),
  });
  const errors = result.errors + result.non2xx;
  return {
    name,
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    errors,
  };
}

/** A markdown table with each scenario's throughput as a ratio of the first (the baseline). */
export function report(title: string, rows: Measurement[]): string {
  const baseline = rows[0]?.requestsPerSecond || 1;
  const lines = [
    `### ${title}`,
    '',
    '| scenario | req/s | ratio to baseline | p50 ms | p99 ms | errors |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(
      (row) =>
        `| ${row.name} | ${row.requestsPerSecond} | ${(row.requestsPerSecond / baseline).toFixed(2)} | ${row.p50Ms} | ${row.p99Ms} | ${row.errors} |`,
    ),
  ];
  return lines.join('\n');
}
