import http from 'node:http';

export interface WireRequest {
  method: string;
  /** Sent as is: already encoded, never normalised (`..` stays). */
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  omitHost?: boolean;
}

export interface WireResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

/** A request over a plain socket, so paths, headers and bytes arrive exactly as written. */
export function sendRaw(origin: string, request: WireRequest, timeoutMs: number): Promise<WireResponse> {
  const url = new URL(origin);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: url.hostname,
      port: url.port,
      method: request.method,
      path: request.path,
      headers: {
        ...request.headers,
        ...(request.body !== undefined ? { 'content-length': String(Buffer.byteLength(request.body)) } : {}),
      },
      setHost: !request.omitHost,
      agent: false,
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString(),
        }),
      );
    });
    req.end(request.body);
  });
}
