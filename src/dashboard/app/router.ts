import { useEffect, useState } from 'preact/hooks';

/**
 * Screens live in the URL's hash (#/apps/…): the server serves one page for all of them, and
 * the back button, reloads and links to a screen keep working.
 */
function currentPath(): string {
  const path = location.hash.replace(/^#/, '');
  return path.startsWith('/') ? path : '/';
}

export function useHashPath(): string {
  const [path, setPath] = useState(currentPath);
  useEffect(() => {
    const update = () => setPath(currentPath());
    addEventListener('hashchange', update);
    return () => removeEventListener('hashchange', update);
  }, []);
  return path;
}

export function navigate(path: string): void {
  if (currentPath() !== path) location.hash = path;
}

export const href = (path: string) => `#${path}`;

/** The screen a path names, without its query. */
export const screenOf = (path: string) => path.split('?')[0] ?? '';

/** The query of a path (#/licenses?status=active&sort=-createdAt): a list's filters, sort and page. */
export const queryOf = (path: string) => new URLSearchParams(path.split('?')[1] ?? '');

/** `screen` with the non-empty values of `query` in its query string. */
export function withQuery(screen: string, query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query))
    if (value !== undefined && value !== '' && value !== 0) params.set(name, String(value));
  const text = params.toString();
  return text ? `${screen}?${text}` : screen;
}

/**
 * Every named segment is a resource id. Anything else (an encoded slash, `..`, `?`) does not
 * match, so a crafted link cannot steer the screen's API calls to another path.
 */
const ID_SEGMENT = /^[0-9A-Za-z-]{1,64}$/;

/** The named segments of `pattern` (":name") in `path`, or null when it does not match. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = path.split('?')[0]?.split('/') ?? [];
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (const [index, part] of want.entries()) {
    const value = got[index] ?? '';
    if (part.startsWith(':')) {
      if (!ID_SEGMENT.test(value)) return null;
      params[part.slice(1)] = value;
    } else if (part !== value) return null;
  }
  return params;
}
