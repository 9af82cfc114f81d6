import { type BrandView, brandCss } from '../brand/index.js';
import {
  type Fragment,
  formatPrice,
  type Html,
  html,
  type Page,
  pageShell,
  sellerHeader,
} from '../checkout/index.js';
import type { ReleaseAllowance } from '../licenses/index.js';
import type { HolderRefusal } from '../releases/index.js';
import { bytes, CHANNEL_WORDS, DOWNLOAD_REFUSALS, day, moment } from './words.js';

/** What a portal request answers: a page, a redirect (both maybe setting the cookie), or a file. */
export type PortalOutcome =
  | { status: number; page: Page; cookie?: string }
  | { redirect: string; cookie?: string }
  | { download: { filename: string; body: string } };

/**
 * What the portal shows of a buyer's purchases: names, keys, states and dates, and the brand of
 * each seller who set one (name, logo, colour); nothing else of the seller's.
 */
export interface PortalView {
  email: string;
  /** The brands of the sellers the buyer bought from; entries name theirs by position. */
  sellers: BrandView[];
  csrf: string;
  notice: string | null;
  /** A problem with a form, shown above the license it concerns; `code` names it for machines. */
  problem: { licenseId: string | null; message: string; code?: string } | null;
  licenses: {
    id: string;
    seller: number | null;
    name: string;
    key: string;
    status: string;
    expiresAt: Date | null;
    floating: boolean;
    places: string;
    /** offlineUntil: an offline license file holds the device until then, so it cannot be released. */
    devices: (DeviceNaming & { activatedAt: Date; offlineUntil: Date | null })[];
    /** Floating licenses: the seats held now (leases not lapsed). */
    seats: (DeviceNaming & { acquiredAt: Date; leaseExpiresAt: Date })[];
    releases: ReleaseAllowance;
    downloads: {
      /** The license's status keeps every release from it (said only when the app has releases). */
      refused: HolderRefusal | null;
      /** Why the newest release is not the license's, when it may have none. */
      withheld: string | null;
      /** The newest release of each channel the license follows, newest first. */
      releases: {
        version: string;
        channel: string;
        publishedAt: Date;
        notes: string;
        artifacts: {
          id: string;
          filename: string;
          platform: string | null;
          arch: string | null;
          /** Null for a file the seller hosts and declared no size (or digest) of. */
          size: number | null;
          sha256: string | null;
        }[];
      }[];
    };
  }[];
  orders: {
    seller: number | null;
    transactionId: string;
    name: string;
    amount: string;
    currency: string;
    status: string;
    at: Date;
  }[];
  subscriptions: {
    id: string;
    seller: number | null;
    name: string;
    status: string;
    interval: string;
    currentPeriodEnd: Date;
    canceledAt: Date | null;
  }[];
}

/** A device as its software named it (name and platform, when it said), and its id. */
interface DeviceNaming {
  hwuid: string;
  name: string | null;
  platform: string | null;
}

function layout(
  title: string,
  body: Html,
  signedIn: { csrf: string; email: string } | null = null,
  inlineStyle: string | null = null,
): Page {
  const head = signedIn
    ? html`<header class="portal-head">
<p class="who">Signed in as <strong>${signedIn.email}</strong></p>
<form method="post" action="/portal/sign-out" class="inline">
<input type="hidden" name="csrf" value="${signedIn.csrf}">
<button type="submit" class="secondary small" id="sign-out">Sign out</button>
</form>
</header>`
    : '';
  return pageShell(
    title,
    html`${head}
${body}`,
    {
      stylesheets: ['/portal/assets/portal.css'],
      cardClass: 'portal',
      footer: 'Your purchases, under the e-mail address you bought with.',
      inlineStyle,
    },
  );
}

/** Each seller's colours for their own entries (class brand-N), in one style element. */
function sellerStyles(sellers: readonly BrandView[]): string | null {
  const rules = sellers.flatMap((brand, at) =>
    brand.colours ? [brandCss(`.brand-${at}`, brand.colours)] : [],
  );
  return rules.length > 0 ? rules.join('\n') : null;
}

/** The name a seller gave their brand, before an order's date: who the buyer paid. */
function sellerName(view: PortalView, seller: number | null): Fragment {
  const name = seller === null ? null : view.sellers[seller]?.name;
  return name ? html`<span class="order-seller">${name}</span> · ` : '';
}

/** An entry's classes and its seller's header, for an entry of a seller with a brand. */
function sellerOf(view: PortalView, seller: number | null): { classes: string; header: Fragment } {
  const brand = seller === null ? undefined : view.sellers[seller];
  if (!brand) return { classes: '', header: '' };
  return {
    classes: brand.colours ? ` branded brand-${seller}` : '',
    header: sellerHeader(brand, 'small'),
  };
}

export function signInPage(options: { email?: string; error?: string; notice?: string } = {}): Page {
  return layout(
    'Your purchases – Sign in',
    html`<h1>Your purchases</h1>
<p>Enter the e-mail address you bought with. We send you a link to sign in; no password needed.</p>
${options.notice ? html`<p class="notice" role="status" id="notice">${options.notice}</p>` : ''}
${options.error ? html`<p class="error" role="alert" id="form-error">${options.error}</p>` : ''}
<form method="post" action="/portal/sign-in" id="sign-in-form">
<label for="email">E-mail</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254" value="${options.email ?? ''}">
<button type="submit" class="pay">Send me a sign-in link</button>
</form>`,
  );
}

export function linkSentPage(minutes: number): Page {
  return layout(
    'Check your e-mail',
    html`<h1>Check your e-mail</h1>
<p role="status" id="link-sent">If purchases were made with this address, a sign-in link is on its way to it.
The link works once, within ${minutes} minutes.</p>
<p class="note">Nothing arrived? Check the spam folder, or <a href="/portal">ask for a new link</a>.</p>`,
  );
}

/** What a sign-in link opens: a button, so a mail scanner following the link does not use it up. */
export function confirmSignInPage(token: string): Page {
  return layout(
    'Sign in',
    html`<h1>Sign in</h1>
<p>Continue to see your licenses, orders and devices.</p>
<form method="post" action="/portal/sign-in/${token}">
<button type="submit" class="pay" id="confirm-sign-in">Sign in</button>
</form>`,
  );
}

export function linkRefusedPage(): Page {
  return layout(
    'This link no longer works',
    html`<h1>This link no longer works</h1>
<p role="alert">Sign-in links work once, and only for a short time. This one was used already, has expired, or is not one of ours.</p>
<p><a class="pay button" href="/portal" id="new-link">Get a new link</a></p>`,
  );
}

export function problemPage(title: string, message: string): Page {
  return layout(
    title,
    html`<h1>${title}</h1>
<p role="alert">${message}</p>
<p><a href="/portal">Back to your purchases</a></p>`,
  );
}

/**
 * The releases the license may download, each file with a Download link (a fresh signed link
 * is made when it is followed), or why there is none. Nothing when the seller publishes none.
 */
function downloadsSection(license: PortalView['licenses'][number]): Html | '' {
  const { refused, withheld, releases } = license.downloads;
  if (!refused && !withheld && releases.length === 0) return '';
  const id = `downloads-${license.id}`;
  return html`<div class="downloads" role="group" aria-labelledby="${id}">
<h4 id="${id}">Downloads</h4>
${refused ? html`<p class="note download-refused" data-code="${refused}">${DOWNLOAD_REFUSALS[refused]}</p>` : ''}
${withheld ? html`<p class="note download-refused">${withheld}</p>` : ''}
${releases.map(
  (release) => html`<div class="release" data-version="${release.version}">
<p class="release-head"><strong>Version ${release.version}</strong>${
    release.channel === 'stable'
      ? ''
      : html` <span class="channel">${CHANNEL_WORDS[release.channel] ?? release.channel}</span>`
  } <span class="note">Published ${day(release.publishedAt)}</span></p>
${
  release.notes
    ? html`<details><summary>Release notes</summary><p class="release-notes">${release.notes}</p></details>`
    : ''
}
${
  release.artifacts.length === 0
    ? html`<p class="note">No file has been published for this version yet.</p>`
    : html`<ul class="files">${release.artifacts.map(
        (file) => html`<li>
<span class="file"><strong class="file-name">${file.filename}</strong><span class="note">${[
          file.platform ?? 'Every platform',
          file.arch ?? 'every architecture',
          ...(file.size === null ? [] : [bytes(file.size)]),
        ].join(' · ')}</span>${
          file.sha256 === null ? '' : html`<span class="note sha">SHA-256 <code>${file.sha256}</code></span>`
        }</span>
<a class="button secondary small" href="/portal/licenses/${license.id}/downloads/${file.id}" aria-label="Download ${file.filename}">Download</a>
</li>`,
      )}</ul>`
}
</div>`,
)}
</div>`;
}

function releasesNote(license: PortalView['licenses'][number]): Html | '' {
  const { allowed, periodDays, left, nextReleaseAt } = license.releases;
  if (license.floating || license.devices.length === 0) return '';
  if (allowed === 0)
    return html`<p class="note releases">Devices are released by the seller’s support only.</p>`;
  return html`<p class="note releases">${
    left > 0
      ? `Device releases left: ${left} of ${allowed} in any ${periodDays} days.`
      : `No device release left: the next is possible from ${nextReleaseAt ? moment(nextReleaseAt) : 'later'}.`
  }</p>`;
}

/** The device's name (its id when it has none), its platform, and its id under a name. */
function deviceNaming(device: DeviceNaming): Html {
  return html`${device.name ? html`<strong class="device-name">${device.name}</strong>` : html`<code>${device.hwuid}</code>`}${
    device.platform ? html`<span class="note device-platform">${device.platform}</span>` : ''
  }${device.name ? html`<span class="note">Device id <code>${device.hwuid}</code></span>` : ''}`;
}

function seatList(view: PortalView, license: PortalView['licenses'][number]): Html {
  if (license.seats.length === 0) {
    return html`<p class="note">No seat is taken now. Seats are taken while the software runs and return by themselves.</p>`;
  }
  return html`<p class="note">Seats are taken while the software runs and return by themselves; release one to free it at once.</p>
<ul class="devices seats">${license.seats.map(
    (seat) => html`<li>
<span class="device">${deviceNaming(seat)}<span class="note">Since ${moment(seat.acquiredAt)}</span><span class="note">Held until ${moment(seat.leaseExpiresAt)} unless renewed</span></span>
<form method="post" action="/portal/licenses/${license.id}/seats/release" class="inline">
<input type="hidden" name="csrf" value="${view.csrf}">
<input type="hidden" name="hwuid" value="${seat.hwuid}">
<button type="submit" class="secondary small">Release</button>
</form>
</li>`,
  )}</ul>`;
}

function licenseSection(view: PortalView, license: PortalView['licenses'][number]): Html {
  const problem = view.problem?.licenseId === license.id ? view.problem : null;
  const canActivate = !license.floating && license.status === 'Active';
  const seller = sellerOf(view, license.seller);
  return html`<section class="item license-item${seller.classes}" data-license-id="${license.id}">
${seller.header}<h3>${license.name}</h3>
<p class="facts"><span class="status status-${license.status.toLowerCase()}">${license.status}</span>
${license.expiresAt ? html`<span>Expires ${day(license.expiresAt)}</span>` : html`<span>Does not expire</span>`}
<span>${license.places}</span></p>
<p class="key-label" id="key-${license.id}">License key</p>
<p class="key" aria-labelledby="key-${license.id}"><code class="license-key">${license.key}</code></p>
${
  problem
    ? problem.code
      ? html`<p class="error" role="alert" data-code="${problem.code}">${problem.message}</p>`
      : html`<p class="error" role="alert">${problem.message}</p>`
    : ''
}
${
  license.floating
    ? seatList(view, license)
    : license.devices.length === 0
      ? html`<p class="note">No device is activated.</p>`
      : html`<ul class="devices">${license.devices.map(
          (device) => html`<li>
<span class="device">${deviceNaming(device)}<span class="note">Activated ${moment(device.activatedAt)}</span>${
            device.offlineUntil
              ? html`<span class="note offline-hold">License file valid until ${moment(device.offlineUntil)}: can be released from then</span>`
              : ''
          }</span>
${
  device.offlineUntil
    ? ''
    : html`<form method="post" action="/portal/licenses/${license.id}/devices/release" class="inline">
<input type="hidden" name="csrf" value="${view.csrf}">
<input type="hidden" name="hwuid" value="${device.hwuid}">
<button type="submit" class="secondary small">Release</button>
</form>`
}
</li>`,
        )}</ul>`
}
${releasesNote(license)}
${downloadsSection(license)}
${
  canActivate
    ? html`<details>
<summary>Activate a computer without internet</summary>
<form method="post" action="/portal/licenses/${license.id}/license-file">
<input type="hidden" name="csrf" value="${view.csrf}">
<label for="request-${license.id}">Activation request</label>
<textarea id="request-${license.id}" name="request" rows="4" required maxlength="4096"
  placeholder="Paste the activation request your software wrote"></textarea>
<button type="submit" class="pay">Download the license file</button>
</form>
</details>`
    : ''
}
</section>`;
}

export function portalPage(view: PortalView): Page {
  const empty = (what: string): Fragment => html`<p class="note">No ${what} under this address.</p>`;
  const generalProblem = view.problem && view.problem.licenseId === null ? view.problem.message : null;
  return layout(
    'Your purchases',
    html`<h1>Your purchases</h1>
${view.notice ? html`<p class="notice" role="status" id="notice">${view.notice}</p>` : ''}
${generalProblem ? html`<p class="error" role="alert">${generalProblem}</p>` : ''}
<h2>Licenses</h2>
${view.licenses.length ? view.licenses.map((license) => licenseSection(view, license)) : empty('licenses')}
<h2>Subscriptions</h2>
${
  view.subscriptions.length
    ? view.subscriptions.map(
        (s) => html`<section class="item subscription-item${sellerOf(view, s.seller).classes}">
${sellerOf(view, s.seller).header}<h3>${s.name}</h3>
<p class="facts"><span class="status status-${s.status.toLowerCase()}">${s.status}</span>
<span>Billed every ${s.interval}</span>
<span>${s.canceledAt ? `Paid until ${day(s.currentPeriodEnd)}` : `Renews ${day(s.currentPeriodEnd)}`}</span></p>
${
  s.status === 'Active'
    ? html`<form method="post" action="/portal/subscriptions/${s.id}/cancel">
<input type="hidden" name="csrf" value="${view.csrf}">
<button type="submit" class="secondary">Cancel subscription</button>
<p class="note">You keep access until the end of the paid period.</p>
</form>`
    : ''
}
</section>`,
      )
    : empty('subscriptions')
}
<h2>Orders</h2>
${
  view.orders.length
    ? html`<ul class="orders">${view.orders.map(
        (
          o,
        ) => html`<li><span><strong>${o.name}</strong><span class="note">${sellerName(view, o.seller)}${day(o.at)} · <code>${o.transactionId}</code></span></span>
<span class="order-amount">${formatPrice(o.amount, o.currency)} <span class="status status-${o.status.toLowerCase()}">${o.status}</span></span></li>`,
      )}</ul>`
    : empty('orders')
}`,
    { csrf: view.csrf, email: view.email },
    sellerStyles(view.sellers),
  );
}
