import http from 'node:http';

/**
 * Health probes in a process of their own (burst.ts's probeWhileHeld), for a test whose own event
 * loop is held meanwhile: GETs `url` every `everyMs`, each on a fresh connection, until an answer
 * has `untilStatus` (or after the first answer without it), giving up after `timeoutMs` in all.
 * Prints one JSON line: every probe's status (0: no answer) and body.
 * Input (argv[2], JSON): ProbeClientInput.
 */
export interface ProbeClientInput {
  url: string;
  untilStatus?: number;
  everyMs: number;
  timeoutMs: number;
}

export interface ProbeAnswer {
  status: number;
  body: string;
}

function probe(url: string, timeoutMs: number): Promise<ProbeAnswer> {
  return new Promise((resolve) => {
    const request = http.get(url, { agent: false, timeout: timeoutMs }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', (error) => resolve({ status: 0, body: error.message }));
    });
    request.on('timeout', () => request.destroy(new Error('timed out')));
    request.on('error', (error) => resolve({ status: 0, body: error.message }));
  });
}

const input = JSON.parse(process.argv[2] ?? '{}') as ProbeClientInput;
const deadline = Date.now() + input.timeoutMs;
const answers: ProbeAnswer[] = [];
while (Date.now() < deadline) {
  const answer = await probe(input.url, Math.max(1, deadline - Date.now()));
  answers.push(answer);
  if (answer.status !== 0 && (input.untilStatus === undefined || answer.status === input.untilStatus)) break;
  await new Promise((resolve) => setTimeout(resolve, input.everyMs));
}
process.stdout.write(`${JSON.stringify(answers)}\n`);
