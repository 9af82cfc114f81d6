import { type BrandView, brandCss } from '../brand/index.js';
import { type Fragment, Html, html, Page } from './html.js';

/** What a checkout page shows of a product: never the seller's settings or secrets. */
export interface PageProduct {
  id: string;
  name: string;
  description: string;
  price: string;
  currency: string;
  billingType: 'one_time' | 'recurring';
  interval: 'month' | 'year' | null;
  cancelUrl: string | null;
  links: Record<'help' | 'support' | 'terms' | 'privacy' | 'refund', string | null>;
}

/**
 * What a route answers: a page with its status, or a redirect. A page of a seller who lists
 * overlay origins may be framed by those sites (frame-ancestors); every other page by none.
 */
export type PageOutcome =
  | { status: number; page: Page; frameAncestors?: readonly string[] }
  | { redirect: string };

export interface CheckoutView {
  product: PageProduct;
  /** The seller's name, logo and colour, and the sites that may frame the page; null: none set. */
  brand: BrandView | null;
  testMode: boolean;
  /** Stripe Elements when the card partner is Stripe; the sandbox's test form otherwise. */
  card:
    | { kind: 'sandbox' }
    | { kind: 'stripe'; publishableKey: string; amountMinor: number }
    | { kind: 'unavailable'; reason: string };
  crypto: boolean;
  email: { value: string; locked: boolean; hidden: boolean };
  payload: string | null;
  attempt: string;
  error: string | null;
  /** The free trial the product offers, or null. */
  trial: TrialView | null;
}

export interface TrialView {
  days: number;
  /** The device the page was opened for (?hwuid=), carried into the trial form. */
  hwuid: string | null;
  email: string;
  error: string | null;
}

export function formatPrice(amount: string, currency: string): string {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).format(Number(amount));
  } catch {
    return `${amount} ${currency}`;
  }
}

/**
 * The HTML document every page of the checkout host is built in (checkout pages, the buyer
 * portal): the host's icon, our stylesheet, then the page's own stylesheets, style element and
 * scripts, the card, a footer line. Light or dark as the buyer's system asks. The style
 * element's text is kept with the page, whose policy allows it by hash.
 */
export function pageShell(
  title: string,
  body: Html,
  options: {
    stylesheets?: string[];
    scripts?: string[];
    cardClass?: string;
    footer: string;
    /** CSS of the page's own style element (the seller's colours); never anything a buyer wrote. */
    inlineStyle?: string | null;
    /** data-* attributes of the body, read by the page's scripts. */
    bodyData?: Record<string, string>;
  },
): Page {
  const data = Object.entries(options.bodyData ?? {}).map(([name, value]) => html` data-${name}="${value}"`);
  const text = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark">
<title>${title}</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/checkout/assets/checkout.css">
${(options.stylesheets ?? []).map((href) => html`<link rel="stylesheet" href="${href}">`)}
${options.inlineStyle ? html`<style>${new StyleText(options.inlineStyle)}</style>` : ''}
${(options.scripts ?? []).map((src) => html`<script src="${src}" defer></script>`)}
</head>
<body${data}>
<main class="${options.cardClass ? `card ${options.cardClass}` : 'card'}">
${body}
</main>
<p class="secure">${options.footer}</p>
</body>
</html>
`.text;
  return new Page(text, options.inlineStyle ? [options.inlineStyle] : []);
}

/**
 * CSS as it goes into a style element: unescaped, so it must be ours. Only brandCss makes it,
 * from validated colours; a closing tag in it would end the element, so one is refused.
 */
class StyleText extends Html {
  constructor(css: string) {
    if (/<\/style/i.test(css)) throw new Error('a style element’s text must not close it');
    super(css);
  }
}

/** The script checkout pages load when the seller's site may open them in the overlay. */
const OVERLAY_FRAME_SCRIPT = '/checkout/assets/overlay-frame.js';

function layout(
  title: string,
  body: Html,
  options: { scripts?: string[]; brand?: BrandView | null } = {},
): Page {
  const brand = options.brand ?? null;
  const framed = brand !== null && brand.overlayOrigins.length > 0;
  return pageShell(title, html`${sellerHeader(brand)}${body}`, {
    scripts: [...(options.scripts ?? []), ...(framed ? [OVERLAY_FRAME_SCRIPT] : [])],
    ...(brand?.colours ? { cardClass: 'branded', inlineStyle: brandCss('.branded', brand.colours) } : {}),
    ...(framed ? { bodyData: { 'overlay-origins': brand.overlayOrigins.join(' ') } } : {}),
    footer: 'Payments are processed securely. Your card details never reach the seller.',
  });
}

/** The seller's logo and name above the page, when they set either. */
export function sellerHeader(
  brand: Pick<BrandView, 'name' | 'logo'> | null,
  size: 'page' | 'small' = 'page',
): Fragment {
  if (!brand || (!brand.name && !brand.logo)) return '';
  return html`<p class="${size === 'page' ? 'seller' : 'seller seller-small'}">${
    brand.logo
      ? html`<img class="seller-logo" src="${brand.logo.path}" width="${brand.logo.width}" height="${brand.logo.height}" alt="${brand.name ? '' : 'The seller’s logo'}">`
      : ''
  }${brand.name ? html`<span class="seller-name">${brand.name}</span>` : ''}</p>
`;
}

function policyLinks(product: PageProduct): Html {
  const names: [keyof PageProduct['links'], string][] = [
    ['help', 'Help'],
    ['support', 'Support'],
    ['terms', 'Terms'],
    ['privacy', 'Privacy'],
    ['refund', 'Refund policy'],
  ];
  const links = names.filter(([key]) => product.links[key]);
  if (links.length === 0) return html``;
  return html`<nav class="links" aria-label="Seller policies">${links.map(
    ([key, label]) =>
      html`<a href="${product.links[key]}" rel="noopener noreferrer" target="_blank">${label}</a>`,
  )}</nav>`;
}

function billing(product: PageProduct): string {
  if (product.billingType !== 'recurring') return 'One-time payment';
  return product.interval === 'year' ? 'Billed every year' : 'Billed every month';
}

export function checkoutPage(view: CheckoutView): Page {
  const { product } = view;
  const price = formatPrice(product.price, product.currency);
  const scripts =
    view.card.kind === 'stripe' ? ['https://js.stripe.com/v3/', '/checkout/assets/checkout.js'] : [];
  const emailField: Fragment = view.email.hidden
    ? html`<p class="note">Your receipt goes to the e-mail address the seller has on file.</p>`
    : html`<label for="email">E-mail</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254"
  value="${view.email.value}" ${view.email.locked ? html`readonly aria-describedby="email-note"` : ''}>
${view.email.locked ? html`<p id="email-note" class="note">Provided by the seller for this purchase.</p>` : ''}`;
  const cardSection: Fragment =
    view.card.kind === 'sandbox'
      ? html`<fieldset>
<legend>Card</legend>
<label for="card">Card number</label>
<input id="card" name="card" inputmode="numeric" autocomplete="cc-number" maxlength="23"
  placeholder="4242 4242 4242 4242" aria-describedby="card-note">
<p id="card-note" class="note">Test mode: use 4242 4242 4242 4242. No money moves.</p>
</fieldset>`
      : view.card.kind === 'stripe'
        ? html`<fieldset>
<legend>Card</legend>
<div id="payment-element" data-publishable-key="${view.card.publishableKey}"
  data-amount-minor="${view.card.amountMinor}" data-currency="${product.currency}"></div>
<noscript><p class="note">Card payments need JavaScript enabled.</p></noscript>
</fieldset>`
        : html`<p class="notice" role="status">${view.card.reason}</p>`;
  const canPay = view.card.kind !== 'unavailable' || view.crypto;
  return layout(
    `${product.name} – Checkout`,
    html`<header>
${view.testMode ? html`<p class="badge">Test mode</p>` : ''}
<h1>${product.name}</h1>
${product.description ? html`<p class="description">${product.description}</p>` : ''}
<p class="price"><span class="amount">${price}</span> <span class="billing">${billing(product)}</span></p>
</header>
${view.error ? html`<p class="error" role="alert" id="form-error">${view.error}</p>` : html`<p class="error" role="alert" id="form-error" hidden></p>`}
${view.card.kind === 'unavailable' && !canPay ? cardSection : ''}
${
  canPay
    ? html`<form method="post" action="/checkout/${product.id}" id="checkout-form" data-product-id="${product.id}">
<input type="hidden" name="attempt" value="${view.attempt}">
${view.payload ? html`<input type="hidden" name="payload" value="${view.payload}">` : ''}
${emailField}
${cardSection}
<div class="actions">
${view.card.kind !== 'unavailable' ? html`<button type="submit" name="method" value="card" class="pay">Pay ${price}</button>` : ''}
${view.crypto ? html`<button type="submit" name="method" value="crypto" class="secondary">Pay with crypto</button>` : ''}
</div>
</form>`
    : ''
}
${view.trial ? trialSection(product, view.trial) : ''}
${product.cancelUrl ? html`<p class="cancel"><a href="${product.cancelUrl}" id="cancel">Cancel and return to the seller</a></p>` : ''}
${policyLinks(product)}`,
    { scripts, brand: view.brand },
  );
}

const trialLabel = (days: number) => `Start your ${days}-day free trial`;

/** The trial form: an e-mail, and the device the page was opened for. No payment. */
function trialSection(product: PageProduct, trial: TrialView): Html {
  return html`<section class="trial" aria-labelledby="trial-title">
<h2 id="trial-title">Try it first</h2>
<p class="note">${
    trial.hwuid
      ? 'No payment needed: the trial starts on this device at once, and the key also comes to your e-mail address.'
      : 'No payment needed: the trial key comes to your e-mail address.'
  } One trial per person and device.</p>
${trial.error ? html`<p class="error" role="alert" id="trial-error">${trial.error}</p>` : ''}
<form method="post" action="/checkout/${product.id}/trial" id="trial-form">
${trial.hwuid ? html`<input type="hidden" name="hwuid" value="${trial.hwuid}">` : ''}
<label for="trial-email">E-mail for your trial key</label>
<input id="trial-email" name="email" type="email" autocomplete="email" required maxlength="254" value="${trial.email}">
<div class="actions"><button type="submit" class="secondary" id="start-trial">${trialLabel(trial.days)}</button></div>
</form>
</section>`;
}

/**
 * After the trial form: on a device, the key (bound to it); by e-mail, only where the key went,
 * since whoever typed the address may not own it.
 */
export function trialStartedPage(view: {
  product: PageProduct;
  brand: BrandView | null;
  /** Null for a trial by e-mail. */
  licenseKey: string | null;
  email: string;
  days: number;
  endsAt: string;
}): Page {
  const until = html`for ${view.days} days, until <time datetime="${view.endsAt}">${view.endsAt.slice(0, 10)}</time>`;
  const paying = html`When you buy ${view.product.name} with this e-mail address, your paid license comes with a new key and the trial key stops working.`;
  if (view.licenseKey === null)
    return layout(
      `Check your e-mail – ${view.product.name}`,
      html`<h1>Check your e-mail</h1>
<p role="status">We sent your trial key for <strong>${view.product.name}</strong> to ${view.email}. The trial runs ${until}.</p>
<p class="note">No message? Look in your spam folder. ${paying}</p>
<p><a class="pay button" href="/checkout/${view.product.id}">Buy ${view.product.name}</a></p>
${policyLinks(view.product)}`,
      { brand: view.brand },
    );
  return layout(
    `Trial started – ${view.product.name}`,
    html`<h1>Your free trial has started</h1>
<p>You can use <strong>${view.product.name}</strong> on this device ${until}.</p>
<p><label for="license-key">Your trial license key</label></p>
<p><input id="license-key" class="license" readonly value="${view.licenseKey}" aria-describedby="license-note"></p>
<p id="license-note" class="note">We also sent it to ${view.email}. ${paying}</p>
<p><a class="pay button" href="/checkout/${view.product.id}">Buy ${view.product.name}</a></p>
${policyLinks(view.product)}`,
    { brand: view.brand },
  );
}

export function successPage(view: {
  product: PageProduct;
  brand: BrandView | null;
  licenseKey: string;
  email: string | null;
  transactionId: string;
  continueUrl: string | null;
}): Page {
  // What the overlay's frame script tells the seller's page: what a signed redirect carries.
  const overlayResult =
    view.brand && view.brand.overlayOrigins.length > 0
      ? html`<div id="overlay-result" hidden data-product-id="${view.product.id}" data-transaction-id="${view.transactionId}" data-license-key="${view.licenseKey}"${view.email ? html` data-email="${view.email}"` : ''}></div>`
      : '';
  return layout(
    `Payment complete – ${view.product.name}`,
    html`<h1>Payment complete</h1>
<p>Thank you for buying <strong>${view.product.name}</strong>.</p>
<p><label for="license-key">Your license key</label></p>
<p><input id="license-key" class="license" readonly value="${view.licenseKey}" aria-describedby="license-note"></p>
<p id="license-note" class="note">Keep this key: you need it to activate the software.${view.email ? html` It belongs to ${view.email}.` : ''}</p>
<p class="note">Transaction <code>${view.transactionId}</code></p>
${view.continueUrl ? html`<p><a class="pay button" id="continue" href="${view.continueUrl}">Continue to ${view.product.name}</a></p>` : ''}
${policyLinks(view.product)}
${overlayResult}`,
    { brand: view.brand },
  );
}

export function pendingPage(product: PageProduct, refreshUrl: string, brand: BrandView | null): Page {
  return layout(
    `Payment pending – ${product.name}`,
    html`<h1>Payment in progress</h1>
<p role="status">We are waiting for the payment to be confirmed. This can take a few minutes for crypto payments.</p>
<p><a class="pay button" href="${refreshUrl}">Check again</a></p>`,
    { brand },
  );
}

export function problemPage(title: string, message: string, backUrl: string | null = null): Page {
  return layout(
    title,
    html`<h1>${title}</h1>
<p role="alert">${message}</p>
${backUrl ? html`<p><a href="${backUrl}">Return to the seller</a></p>` : ''}`,
  );
}
