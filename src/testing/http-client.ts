import assert from 'node:assert/strict';

/** A thin fetch wrapper for tests: real HTTP to a real listener, JSON in and out. */
export interface HttpResponse {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field in tests
  body: any;
  text: string;
  /** Asserts the status (showing the body on mismatch) and returns the response. */
  expect(status: number): HttpResponse;
}

export interface RequestOptions {
  token?: string;
  headers?: Record<string, string>;
  /** A raw body sent as is (for content-type and parser tests). */
  raw?: string | Buffer;
  /** Gives up on a request that takes longer (a hang is a failure, not a wait). */
  timeoutMs?: number;
}

export interface HttpClient {
  baseUrl: string;
  request(method: string, path: string, body?: unknown, options?: RequestOptions): Promise<HttpResponse>;
  get(path: string, options?: RequestOptions): Promise<HttpResponse>;
  post(path: string, body?: unknown, options?: RequestOptions): Promise<HttpResponse>;
  put(path: string, body?: unknown, options?: RequestOptions): Promise<HttpResponse>;
  patch(path: string, body?: unknown, options?: RequestOptions): Promise<HttpResponse>;
  delete(path: string, options?: RequestOptions): Promise<HttpResponse>;
}

export function httpClient(baseUrl: string): HttpClient {
  async function request(method: string, path: string, body?: unknown, options: RequestOptions = {}) {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let payload: string | Buffer | undefined;
    if (options.raw !== undefined) {
      payload = options.raw;
    } else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(baseUrl + path, {
      method,
      headers,
      body: payload,
      redirect: 'manual',
      ...(options.timeoutMs ? { signal: AbortSignal.timeout(options.timeoutMs) } : {}),
    });
    const text = await res.text();
    let parsed: unknown = null;
    if (text && res.headers.get('content-type')?.includes('application/json')) parsed = JSON.parse(text);
    const response: HttpResponse = {
      status: res.status,
      headers: res.headers,
      body: parsed,
      text,
      expect(status) {
        assert.equal(res.status, status, `${method} ${path} answered ${res.status}: ${text.slice(0, 500)}`);
        return response;
      },
    };
    return response;
  }
  return {
    baseUrl,
    request,
    get: (path, options) => request('GET', path, undefined, options),
    post: (path, body, options) => request('POST', path, body, options),
    put: (path, body, options) => request('PUT', path, body, options),
    patch: (path, body, options) => request('PATCH', path, body, options),
    delete: (path, options) => request('DELETE', path, undefined, options),
  };
}

/** Asserts the one error body shape and returns its error object. */
export function assertError(res: HttpResponse, status: number, code: string) {
  res.expect(status);
  assert.equal(res.body?.error?.code, code, `expected ${code}: ${res.text}`);
  assert.equal(typeof res.body.error.message, 'string');
  assert.equal(res.body.error.requestId, res.headers.get('x-request-id'));
  return res.body.error as { code: string; message: string; details?: { field: string; message: string }[] };
}
