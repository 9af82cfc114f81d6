/**
 * The sites a seller lets frame their checkout pages (the overlay): exact origins, each sent as
 * a source of `Content-Security-Policy: frame-ancestors`. An origin here is what a browser calls
 * one: scheme, host and port, nothing more; no wildcards, paths, queries or credentials, so a
 * value can neither widen the policy nor break out of its header.
 */

/** How many sites one seller may list. */
export const MAX_OVERLAY_ORIGINS = 10;

export interface OverlayOriginPolicy {
  /**
   * Also `http://` on this machine's own names (localhost, 127.0.0.1, [::1]), which browsers
   * treat as secure: for development and tests, never in production.
   */
  allowLoopbackHttp: boolean;
}

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Why `value` cannot be listed, or null when it can. */
export function refuseOverlayOrigin(value: string, policy: OverlayOriginPolicy): string | null {
  if (value.includes('*')) return 'must be an exact origin: wildcards are not accepted';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'must be an origin such as https://shop.example.com';
  }
  if (url.protocol === 'http:') {
    if (!(policy.allowLoopbackHttp && LOOPBACK_HOSTS.has(url.hostname)))
      return 'must use https (http only for localhost outside production)';
  } else if (url.protocol !== 'https:') return 'must use https';
  if (url.username || url.password) return 'must not carry credentials';
  // The browser's own spelling of the origin: a path (even "/"), query or fragment, upper-case
  // letters or a default port written out all make the value differ from it.
  if (url.origin !== value)
    return `must be an origin alone, written as browsers write it (${url.origin}), with no path or trailing slash`;
  return null;
}
