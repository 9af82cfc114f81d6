import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import { AppError } from '../../platform/errors.js';
import type { Log } from '../../platform/log.js';
import type { Html } from '../checkout/index.js';
import {
  effectiveStatus,
  type LicenseService,
  LONGEST_RELEASE_PERIOD_DAYS,
  type OfflineActivation,
  parseActivationRequest,
  releaseAllowance,
} from '../licenses/index.js';
import { PORTAL_POLICY_DEFAULTS } from '../products/index.js';
import type { SubscriptionService } from '../subscriptions/index.js';
import {
  confirmSignInPage,
  linkRefusedPage,
  linkSentPage,
  type PortalView,
  portalPage,
  problemPage,
  releaseRefusal,
  signInPage,
  statusWord,
} from './pages.js';
import * as store from './store.js';

/** A sign-in link works once, within this time. */
export const LINK_MINUTES = 15;
/** A signed-in browser stays signed in this long, then signs in again. */
export const SESSION_HOURS = 12;
export const SESSION_COOKIE = 'portal_session';

/** Where a finished action sends the browser back to, and what the page then says. */
export const DONE_NOTICES = {
  'device-released': 'The device was released. Its place is free for another device.',
  'seat-released': 'The seat was given back. It is free for another device.',
  'subscription-canceled': 'The subscription is canceled. You keep access until the end of the paid period.',
  'signed-out': 'You are signed out.',
} as const;
export type DoneNotice = keyof typeof DONE_NOTICES;

/** What a portal request answers: a page, a redirect (both maybe setting the cookie), or a file. */
export type PortalOutcome =
  | { status: number; page: Html; cookie?: string }
  | { redirect: string; cookie?: string }
  | { download: { filename: string; body: string } };

interface Session {
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

export type PortalService = ReturnType<typeof createPortalService>;

/**
 * The buyer portal: one-time links by e-mail, sessions in a cookie, and a buyer's own licenses,
 * orders and subscriptions, matched by the normalized e-mail address. Every action goes through
 * the same service function the seller's routes use (device release, offline activation, cancel).
 */
export function createPortalService({
  db,
  clock,
  log,
  payUrl,
  linkSecret,
  licenses,
  offline,
  subscriptions,
}: {
  db: Db;
  clock: Clock;
  log: Log;
  /** The checkout host's public address: the links point at it, and https makes the cookie Secure. */
  payUrl: string;
  /** The server secret sign-in links are derived under when their mail is sent (every node's). */
  linkSecret: string;
  licenses: Pick<LicenseService, 'releaseBuyerDevice' | 'releaseBuyerSeat'>;
  offline: Pick<OfflineActivation, 'activateLicense'>;
  subscriptions: Pick<SubscriptionService, 'cancelForBuyer'>;
}) {
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

  /**
   * The signed-in buyer's license and the device a release form names, or the page that refuses
   * it: another buyer's license, or no device named, is not found.
   */
  async function buyerTarget(
    token: string | undefined,
    licenseId: string,
    form: { csrf?: string; hwuid?: string },
    what: 'Device' | 'Seat',
  ): Promise<
    | {
        session: Session;
        license: NonNullable<Awaited<ReturnType<typeof store.findBuyerLicense>>>;
        hwuid: string;
        refused?: never;
      }
    | { refused: PortalOutcome; session?: never; license?: never; hwuid?: never }
  > {
    const { session, refused } = await formSession(token, form.csrf);
    if (refused) return { refused };
    const license = await store.findBuyerLicense(db, session.email, licenseId);
    if (!license || !form.hwuid) return { refused: notFoundPage(what) };
    return { session, license, hwuid: form.hwuid };
  }

  /** The session a form is posted under, or the page that refuses it. */
  async function formSession(
    token: string | undefined,
    csrf: string | undefined,
  ): Promise<{ session: Session; refused?: never } | { refused: PortalOutcome; session?: never }> {
    const session = await sessionOf(token);
    if (!session) {
      return {
        refused: {
          status: 401,
          page: problemPage('Please sign in again', 'Your session has ended. Sign in again to continue.'),
          cookie: clearedCookie(),
        },
      };
    }
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

  async function view(
    session: Session,
    notice: string | null,
    problem: PortalView['problem'] = null,
  ): Promise<PortalView> {
    const now = clock.now();
    const [licenseRows, orders, subscriptionRows] = await Promise.all([
      store.buyerLicenses(db, session.email),
      store.buyerOrders(db, session.email),
      store.buyerSubscriptions(db, session.email),
    ]);
    const ids = licenseRows.map((row) => row.id);
    const floatingIds = licenseRows.filter((row) => row.floating).map((row) => row.id);
    const [devices, seats, releases] = await Promise.all([
      store.devicesOf(db, ids),
      store.seatsOf(db, floatingIds, now),
      store.buyerReleasesOf(db, ids, new Date(now.getTime() - LONGEST_RELEASE_PERIOD_DAYS * 86_400_000)),
    ]);
    return {
      email: session.email,
      csrf: session.csrf,
      notice,
      problem,
      licenses: licenseRows.map((row) => {
        const bound = devices.filter((device) => device.license_id === row.id);
        return {
          id: row.id,
          name: row.product_name ?? row.app_name,
          key: row.key,
          status: statusWord(effectiveStatus(row.status, row.expires_at, now)),
          expiresAt: row.expires_at,
          floating: row.floating,
          places: row.floating
            ? `Up to ${row.max_seats ?? 0} devices at once`
            : row.max_devices === null
              ? `${bound.length} devices, no limit`
              : `${bound.length} of ${row.max_devices} devices`,
          devices: bound.map((device) => ({
            hwuid: device.hwuid,
            name: device.name,
            platform: device.platform,
            activatedAt: device.activated_at,
            offlineUntil: device.offline_until && device.offline_until > now ? device.offline_until : null,
          })),
          seats: seats
            .filter((seat) => seat.license_id === row.id)
            .map((seat) => ({
              hwuid: seat.hwuid,
              name: seat.name,
              platform: seat.platform,
              acquiredAt: seat.acquired_at,
              leaseExpiresAt: seat.lease_expires_at,
            })),
          releases: releaseAllowance(
            row,
            releases.filter((release) => release.license_id === row.id).map((release) => release.released_at),
            now,
          ),
        };
      }),
      orders: orders.map((row) => ({
        transactionId: row.transaction_id,
        name: row.name,
        amount: row.amount,
        currency: row.currency,
        status: statusWord(row.status),
        at: row.paid_at ?? row.created_at,
      })),
      subscriptions: subscriptionRows.map((row) => ({
        id: row.id,
        name: row.name,
        status: statusWord(row.status),
        interval: row.interval,
        currentPeriodEnd: row.current_period_end,
        canceledAt: row.canceled_at,
      })),
    };
  }

  const notFoundPage = (what: string): PortalOutcome => ({
    status: 404,
    page: problemPage(`${what} not found`, `No ${what.toLowerCase()} of yours matches this address.`),
  });

  return {
    /** Forgets ended links and sessions (an hourly job); returns how many rows went. */
    purgeEnded: () => store.purgeEnded(db, clock.now()),

    /** The signed-in buyer's purchases, or the sign-in form. */
    async home(token: string | undefined, done: DoneNotice | undefined): Promise<PortalOutcome> {
      const session = await sessionOf(token);
      if (!session) {
        if (done === 'signed-out') return { status: 200, page: signInPage({ notice: DONE_NOTICES[done] }) };
        return { status: 200, page: signInPage() };
      }
      return { status: 200, page: portalPage(await view(session, done ? DONE_NOTICES[done] : null)) };
    },

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

    /**
     * Frees a device's place through the license service's buyer release: refused with 409 while
     * an offline file holds the device or when the product's release allowance is used up.
     */
    async releaseDevice(
      token: string | undefined,
      licenseId: string,
      form: { csrf?: string; hwuid?: string },
    ): Promise<PortalOutcome> {
      const { session, license, hwuid, refused } = await buyerTarget(token, licenseId, form, 'Device');
      if (refused) return refused;
      const outcome = await orNotFound(licenses.releaseBuyerDevice(license.id, hwuid));
      if (outcome === null) return notFoundPage('Device');
      if (!outcome.released) {
        return {
          status: 409,
          page: portalPage(
            await view(session, null, {
              licenseId: license.id,
              code: outcome.code,
              message: releaseRefusal(outcome),
            }),
          ),
        };
      }
      return { redirect: '/portal?done=device-released' };
    },

    /**
     * Gives back a seat of one of the buyer's floating licenses, through the license service's
     * buyer seat release (license.seat.released, reason buyer). No allowance applies: a seat
     * lapses by itself, and the license never lends more than maxSeats at once.
     */
    async releaseSeat(
      token: string | undefined,
      licenseId: string,
      form: { csrf?: string; hwuid?: string },
    ): Promise<PortalOutcome> {
      const { license, hwuid, refused } = await buyerTarget(token, licenseId, form, 'Seat');
      if (refused) return refused;
      if ((await orNotFound(licenses.releaseBuyerSeat(license.id, hwuid))) === null)
        return notFoundPage('Seat');
      return { redirect: '/portal?done=seat-released' };
    },

    /**
     * Binds the device of an activation request and answers its signed license file, through
     * the offline activation the seller's route uses; a refusal is shown on the page.
     */
    async licenseFile(
      token: string | undefined,
      licenseId: string,
      form: { csrf?: string; request?: string },
    ): Promise<PortalOutcome> {
      const { session, refused } = await formSession(token, form.csrf);
      if (refused) return refused;
      const license = await store.findBuyerLicense(db, session.email, licenseId);
      if (!license) return notFoundPage('License');
      const problem = async (status: number, message: string): Promise<PortalOutcome> => ({
        status,
        page: portalPage(await view(session, null, { licenseId: license.id, message })),
      });
      try {
        const request = parseActivationRequest(form.request ?? '');
        if (request.canonicalKey !== license.key || (request.appId && request.appId !== license.app_id)) {
          return problem(422, 'This activation request was written for another license key.');
        }
        // The product's validity for files a buyer takes, not the seller's year: a short file
        // keeps its device held (unreleasable here) for a short time only.
        const file = await offline.activateLicense(license, request, {
          validDays: license.portal_license_file_days ?? PORTAL_POLICY_DEFAULTS.portalLicenseFileDays,
        });
        return { download: { filename: `license-${license.id.slice(0, 8)}.lic`, body: file.licenseFile } };
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        if (error.code === 'validation_failed')
          return problem(
            422,
            `This is not an activation request as your software writes it (${error.message}). Paste it again, whole.`,
          );
        // Every refusal of activation (no free place, not active, floating, signing off) is a 409
        // whose message is written for people; a leading machine code is left out.
        if (error.status === 409) return problem(409, error.message.replace(/^[a-z_]+: /, ''));
        throw error;
      }
    },

    /** Cancels through the subscription service's own cancel (subscription.canceled to the seller). */
    async cancelSubscription(
      token: string | undefined,
      subscriptionId: string,
      form: { csrf?: string },
    ): Promise<PortalOutcome> {
      const { session, refused } = await formSession(token, form.csrf);
      if (refused) return refused;
      if (!(await store.ownsSubscription(db, session.email, subscriptionId)))
        return notFoundPage('Subscription');
      try {
        await subscriptions.cancelForBuyer(subscriptionId);
      } catch (error) {
        if (!(error instanceof AppError && error.code === 'subscription_inactive')) throw error;
        return {
          status: 409,
          page: portalPage(
            await view(session, null, { licenseId: null, message: 'This subscription is already canceled.' }),
          ),
        };
      }
      return { redirect: '/portal?done=subscription-canceled' };
    },
  };
}

/** What `work` answers, or null when it refuses with not_found (another buyer's, or gone). */
async function orNotFound<T>(work: Promise<T>): Promise<T | null> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') return null;
    throw error;
  }
}
