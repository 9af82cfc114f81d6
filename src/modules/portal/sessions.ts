import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { PortalServiceDeps } from './deps.js';
import {
  confirmSignInPage,
  linkRefusedPage,
  linkSentPage,
  type PortalOutcome,
  problemPage,
  signInPage,
} from './pages.js';
import * as store from './store.js';

/** A sign-in link works once, within this time. */
export const LINK_MINUTES = 15;
/** A signed-in browser stays signed in this long, then signs in again. */
export const SESSION_HOURS = 12;
export const SESSION_COOKIE = 'portal_session';

export interface Session {
  email: string;
  tokenHash: string;
  csrf: string;
}

const EMAIL = /^[^\s@<>()[\]\\,;:"]+@[^\s@<>()[\]\\,;:"]+\.[^\s@<>()[\]\\,;:"]+$/;

/** Tokens are 32 random bytes; the database keeps their SHA-256 only and is looked up by it. */
const newToken = () => randomBytes(32).toString('base64url');
const digest = (token: string) => createHash('sha256').update(token).digest('hex');
/**
 * The token a sign-in mail carries, made when the mail is sent from the notice and its attempt
 * under the server secret: neither the queued notice nor the link row (its SHA-256) holds it or
 * what makes it, and each attempt mails a link of its own, so a link already used never works
 * again because a send was retried.
 */
const linkTokenOf = (secret: string, notice: { id: string; attempts: number }) =>
  createHmac('sha256', secret).update(`portal-sign-in:${notice.id}:${notice.attempts}`).digest('base64url');
/** The session's form token: derived from the cookie's token, so it is per session and never stored. */
const csrfOf = (sessionToken: string) =>
  createHmac('sha256', sessionToken).update('portal-csrf').digest('base64url');

function sameSecret(sent: string | undefined, expected: string): boolean {
  if (typeof sent !== 'string') return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * How a buyer signs in to the portal: a one-time link by e-mail, then a session in a cookie, and
 * the session every form is posted under (its csrf token).
 */
export function createSessions({
  db,
  clock,
  log,
  payUrl,
  linkSecret,
}: Pick<PortalServiceDeps, 'db' | 'clock' | 'log' | 'payUrl' | 'linkSecret'>) {
  const secure = new URL(payUrl).protocol === 'https:';
  const base = payUrl.replace(/\/+$/, '');
  const cookie = (value: string, maxAgeSeconds: number) =>
    [
      `${SESSION_COOKIE}=${value}`,
      'Path=/portal',
      `Max-Age=${maxAgeSeconds}`,
      'HttpOnly',
      'SameSite=Lax',
      ...(secure ? ['Secure'] : []),
    ].join('; ');
  const clearedCookie = () => cookie('', 0);

  async function sessionOf(token: string | undefined): Promise<Session | null> {
    if (!token || token.length > 128) return null;
    const tokenHash = digest(token);
    const email = await store.findSession(db, tokenHash, clock.now());
    return email ? { email, tokenHash, csrf: csrfOf(token) } : null;
  }

  /** The session a form is posted under, or the page that refuses it. */
  /** What a request that needs a session answers without one: a page to sign in again. */
  function signedOut(): PortalOutcome {
    return {
      status: 401,
      page: problemPage('Please sign in again', 'Your session has ended. Sign in again to continue.'),
      cookie: clearedCookie(),
    };
  }

  async function formSession(
    token: string | undefined,
    csrf: string | undefined,
  ): Promise<{ session: Session; refused?: never } | { refused: PortalOutcome; session?: never }> {
    const session = await sessionOf(token);
    if (!session) return { refused: signedOut() };
    if (!sameSecret(csrf, session.csrf)) {
      return {
        refused: {
          status: 403,
          page: problemPage(
            'This form has expired',
            'The form did not come from your current session. Go back to your purchases and try again.',
          ),
        },
      };
    }
    return { session };
  }

  return {
    sessionOf,
    signedOut,
    formSession,

    /** Forgets ended links and sessions (an hourly job); returns how many rows went. */
    purgeEnded: () => store.purgeEnded(db, clock.now()),

    /**
     * Queues a sign-in mail and answers the same page whoever asks. Whether the address bought
     * anything is looked up when the mail is sent (signInMail), so the request does the same
     * work, one insert, for a customer and a stranger: neither the answer nor its timing tells
     * which addresses are customers.
     */
    async requestLink(input: string | undefined): Promise<PortalOutcome> {
      const typed = (input ?? '').trim();
      if (!EMAIL.test(typed) || typed.length > 254) {
        return {
          status: 422,
          page: signInPage({ email: typed, error: 'Enter the e-mail address you bought with.' }),
        };
      }
      await store.queueSignInMail(db, typed.toLowerCase(), clock.now());
      log.info('portal.link.queued');
      return { status: 200, page: linkSentPage(LINK_MINUTES) };
    },

    /**
     * The content of a queued sign-in mail, made as it is sent: a new one-time link when anything
     * was bought under the address, or null when nothing was (no mail is owed, and the notice is
     * dropped). The link is valid for LINK_MINUTES from now, whenever the request was made.
     */
    async signInMail(notice: { id: string; attempts: number; to_email: string | null }) {
      const email = notice.to_email;
      if (!email) return null;
      const now = clock.now();
      await store.forgetSpentLinks(db, email, now);
      if (!(await store.holdsPurchases(db, email))) return null;
      const token = linkTokenOf(linkSecret, notice);
      await store.insertSignInLink(db, {
        tokenHash: digest(token),
        email,
        now,
        expiresAt: new Date(now.getTime() + LINK_MINUTES * 60_000),
      });
      return { link: `${base}/portal/sign-in/${token}`, minutes: LINK_MINUTES };
    },

    /** What a link opens: a button that signs in (a GET never uses the link), or why it cannot. */
    async openLink(token: string): Promise<PortalOutcome> {
      if (!(await store.linkIsUsable(db, digest(token), clock.now())))
        return { status: 400, page: linkRefusedPage() };
      return { status: 200, page: confirmSignInPage(token) };
    },

    /** Uses the link (once, however many clicks race) and starts a session. */
    async signIn(token: string): Promise<PortalOutcome> {
      const now = clock.now();
      const email = await store.consumeLink(db, digest(token), now);
      if (!email) {
        log.info('portal.sign_in.refused');
        return { status: 400, page: linkRefusedPage() };
      }
      const sessionToken = newToken();
      await store.insertSession(db, {
        tokenHash: digest(sessionToken),
        email,
        now,
        expiresAt: new Date(now.getTime() + SESSION_HOURS * 3_600_000),
      });
      await store.forgetSpentLinks(db, email, now);
      log.info('portal.signed_in');
      return { redirect: '/portal', cookie: cookie(sessionToken, SESSION_HOURS * 3600) };
    },

    async signOut(token: string | undefined, csrf: string | undefined): Promise<PortalOutcome> {
      if (!(await sessionOf(token))) return { redirect: '/portal', cookie: clearedCookie() };
      const { session, refused } = await formSession(token, csrf);
      if (refused) return refused;
      await store.deleteSession(db, session.tokenHash);
      return { redirect: '/portal?done=signed-out', cookie: clearedCookie() };
    },
  };
}
