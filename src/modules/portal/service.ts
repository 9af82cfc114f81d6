import { AppError } from '../../platform/errors.js';
import { parseActivationRequest } from '../licenses/index.js';
import { PORTAL_POLICY_DEFAULTS } from '../products/index.js';
import { BUYER } from '../timeline/index.js';
import { createBuyerView } from './buyer-view.js';
import type { PortalServiceDeps } from './deps.js';
import { type PortalOutcome, portalPage, problemPage, signInPage } from './pages.js';
import { createSessions, type Session } from './sessions.js';
import * as store from './store.js';
import { downloadRefusal, releaseRefusal } from './words.js';

/** Where a finished action sends the browser back to, and what the page then says. */
export const DONE_NOTICES = {
  'device-released': 'The device was released. Its place is free for another device.',
  'seat-released': 'The seat was given back. It is free for another device.',
  'subscription-canceled': 'The subscription is canceled. You keep access until the end of the paid period.',
  'signed-out': 'You are signed out.',
} as const;
export type DoneNotice = keyof typeof DONE_NOTICES;

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
  brands,
  releases,
}: PortalServiceDeps) {
  const sessions = createSessions({ db, clock, log, payUrl, linkSecret });
  const { sessionOf, formSession } = sessions;
  const view = createBuyerView({ db, clock, brands, releases });

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

  const notFoundPage = (what: string): PortalOutcome => ({
    status: 404,
    page: problemPage(`${what} not found`, `No ${what.toLowerCase()} of yours matches this address.`),
  });

  return {
    purgeEnded: sessions.purgeEnded,
    requestLink: sessions.requestLink,
    signInMail: sessions.signInMail,
    openLink: sessions.openLink,
    signIn: sessions.signIn,
    signOut: sessions.signOut,

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
        const file = await offline.activateLicense(license, request, BUYER, {
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

    /**
     * On to a fresh download link for a file of a release the buyer's license may have, as the
     * portal lists them: the distribution's own rules decide (status, expiry, channels,
     * entitlements), so a release yanked or a license suspended since the page was drawn is
     * refused here, on the page, with the reason.
     */
    async download(token: string | undefined, licenseId: string, artifactId: string): Promise<PortalOutcome> {
      const session = await sessionOf(token);
      if (!session) return sessions.signedOut();
      const license = await store.findBuyerLicense(db, session.email, licenseId);
      if (!license) return notFoundPage('License');
      try {
        const link = await releases.holderLink(license, artifactId);
        return { redirect: link.downloadUrl };
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        if (error.code === 'not_found') return notFoundPage('Download');
        return {
          status: 409,
          page: portalPage(
            await view(session, null, {
              licenseId: license.id,
              code: error.code,
              message: downloadRefusal(error),
            }),
          ),
        };
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
