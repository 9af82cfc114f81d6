/**
 * The session token lives in sessionStorage: it survives a reload of the tab but not closing it,
 * and no other tab or site sees it. No cookie, so no request forgery against the API: only this
 * page's script sends the token.
 */
const KEY = 'dashboard.session';

export function storedToken(): string | null {
  try {
    return sessionStorage.getItem(KEY);
  } catch {
    return null;
  }
}

export function storeToken(token: string | null): void {
  try {
    if (token) sessionStorage.setItem(KEY, token);
    else sessionStorage.removeItem(KEY);
  } catch {
    // Storage can be disabled; the session then lasts as long as the page.
  }
}
