/**
 * The one way the dashboard talks to the service: same-origin calls to /v1 with the session's
 * bearer token. Every failure becomes an ApiError carrying the error body's code, message and
 * field details, so forms can show them next to the fields.
 */

export interface FieldProblem {
  field: string;
  message: string;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: FieldProblem[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

type QueryValue = string | number | boolean | null | undefined;
export type Query = Record<string, QueryValue>;

interface Hooks {
  token(): string | null;
  /** A request made with a token answered 401: the session has ended. */
  unauthorized(): void;
}

let hooks: Hooks = { token: () => null, unauthorized: () => {} };

export function configureApi(next: Hooks): void {
  hooks = next;
}

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/** A JSON body, or a file sent as the body itself with its own type (a logo upload). */
export async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const token = hooks.token();
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const file = body instanceof Blob ? body : null;
  if (file) headers['content-type'] = file.type || 'application/octet-stream';
  else if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(`/v1${path}`, {
      method,
      headers,
      body: file ?? (body === undefined ? undefined : JSON.stringify(body)),
      credentials: 'omit',
    });
  } catch {
    throw new ApiError(
      0,
      'network_error',
      'The service could not be reached. Check the connection and retry.',
    );
  }
  const text = await response.text();
  const parsed: unknown = text ? safeJson(text) : null;
  if (response.ok) return parsed as T;
  const error = (parsed as { error?: { code?: string; message?: string; details?: FieldProblem[] } } | null)
    ?.error;
  if (response.status === 401 && token) hooks.unauthorized();
  throw new ApiError(
    response.status,
    error?.code ?? 'http_error',
    error?.message ?? `The service answered ${response.status}`,
    error?.details ?? [],
  );
}

/**
 * Saves what `path` answers as a file, with the session's token (a plain link cannot send it).
 * The service streams it; the browser holds it until it is saved.
 */
export async function download(path: string, query: Query, filename: string): Promise<void> {
  const token = hooks.token();
  const response = await fetch(`/v1${withQuery(path, query)}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
    credentials: 'omit',
  });
  if (!response.ok) {
    if (response.status === 401 && token) hooks.unauthorized();
    const error = (safeJson(await response.text()) as { error?: { code?: string; message?: string } } | null)
      ?.error;
    throw new ApiError(
      response.status,
      error?.code ?? 'http_error',
      error?.message ?? `The service answered ${response.status}`,
    );
  }
  const url = URL.createObjectURL(await response.blob());
  const link = document.createElement('a');
  link.href = url;
  link.download = filename;
  link.click();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

export const api = {
  get: <T>(path: string, query?: Query) => request<T>('GET', withQuery(path, query)),
  post: <T>(path: string, body?: unknown) => request<T>('POST', path, body),
  put: <T>(path: string, body: unknown) => request<T>('PUT', path, body),
  patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, body),
  delete: (path: string) => request<void>('DELETE', path),
};
