import { LicensingApiError } from './errors.js';

interface ErrorBody {
  error?: {
    code?: string;
    message?: string;
    requestId?: string;
    details?: { field: string; message: string }[];
  };
}

/**
 * Sends one JSON request and returns the parsed answer. Every non-2xx answer, on either host,
 * becomes a LicensingApiError read from the one error body {"error":{code,message,details,requestId}}.
 */
export async function requestJson<T>(
  fetchImpl: typeof fetch,
  method: string,
  url: URL,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const allHeaders: Record<string, string> = { accept: 'application/json', ...headers };
  if (body !== undefined) allHeaders['content-type'] = 'application/json';
  const res = await fetchImpl(url, {
    method,
    headers: allHeaders,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: ErrorBody | undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // Not our answer (a proxy's error page, say): report it as such.
    throw new LicensingApiError(
      res.status,
      'unexpected_response',
      `HTTP ${res.status}: ${text.slice(0, 200)}`,
      undefined,
    );
  }
  if (!res.ok) {
    const error = parsed?.error ?? {};
    throw new LicensingApiError(
      res.status,
      error.code ?? 'http_error',
      error.message ?? res.statusText,
      error.requestId,
      error.details,
    );
  }
  return parsed as T;
}
