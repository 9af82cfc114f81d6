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

const unreachable = () =>
  new ApiError(0, 'network_error', 'The service could not be reached. Check the connection and retry.');

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
    throw unreachable();
  }
  return answerOf<T>(response.status, await response.text(), token);
}

/** The answer's JSON when it succeeded, else its error body as an ApiError (a 401 ends the session). */
function answerOf<T>(status: number, text: string, token: string | null): T {
  const parsed: unknown = text ? safeJson(text) : null;
  if (status >= 200 && status < 300) return parsed as T;
  const error = (parsed as { error?: { code?: string; message?: string; details?: FieldProblem[] } } | null)
    ?.error;
  if (status === 401 && token) hooks.unauthorized();
  throw new ApiError(
    status,
    error?.code ?? 'http_error',
    error?.message ?? `The service answered ${status}`,
    error?.details ?? [],
  );
}

/**
 * PUTs a file as the raw body (application/octet-stream), saying how much of it was sent as it
 * goes: XMLHttpRequest, because fetch reports no upload progress. Same origin, the session's
 * token, and the answer read as request() reads it.
 */
export function upload<T>(
  path: string,
  query: Query,
  file: Blob,
  onProgress: (sent: number, total: number) => void,
): Promise<T> {
  const token = hooks.token();
  return new Promise<T>((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', `/v1${withQuery(path, query)}`);
    xhr.setRequestHeader('accept', 'application/json');
    xhr.setRequestHeader('content-type', 'application/octet-stream');
    if (token) xhr.setRequestHeader('authorization', `Bearer ${token}`);
    xhr.upload.onprogress = (event) => {
      if (event.lengthComputable) onProgress(event.loaded, event.total);
    };
    xhr.onload = () => {
      try {
        resolve(answerOf<T>(xhr.status, xhr.responseText, token));
      } catch (error) {
        reject(error);
      }
    };
    xhr.onerror = () => reject(unreachable());
    xhr.onabort = () => reject(new ApiError(0, 'aborted', 'The upload was stopped.'));
    xhr.send(file);
  });
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
