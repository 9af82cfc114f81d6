import { currencyExponent } from '../../platform/money.js';
import type { BrandView } from '../brand/index.js';

/** What a notification says, in plain text and in simple HTML made from the same blocks. */
export interface RenderedMail {
  subject: string;
  text: string;
  html: string;
}

/** The fields of a purchase notice's data (see queuePurchaseNotices in payments). */
interface PurchaseNotice {
  orderId: string;
  transactionId: string;
  productName: string;
  amount: string;
  currency: string;
  buyerEmail: string;
  licenseKey: string;
}

type Block =
  | { paragraph: string }
  | { licenseKey: string }
  | { link: string }
  | { facts: [label: string, value: string][] };

/** The notices about what a buyer got from a seller: these carry the seller's brand when set. */
export const BRANDED_KINDS: ReadonlySet<string> = new Set([
  'purchase.buyer',
  'purchase.copy',
  'trial.buyer',
  'license.key_replaced',
]);

/** What a message shows of the seller's brand: the name, the logo's absolute address, the colours. */
export type MailBrand = Pick<BrandView, 'name' | 'logo' | 'colours'>;

/**
 * The message for a notification, or null for a kind this module does not know. `brand` is the
 * seller's, shown on the notices of BRANDED_KINDS only.
 */
export function renderNotice(
  kind: string,
  data: Record<string, unknown>,
  brand: MailBrand | null = null,
): RenderedMail | null {
  if (kind === 'portal.sign_in') return renderSignInLink(data);
  const notice = readPurchase(data);
  const product = notice.productName || 'your purchase';
  const seller = BRANDED_KINDS.has(kind) ? brand : null;
  const compose = (subject: string, blocks: Block[]) => composeMail(subject, blocks, seller);
  // Buyers' subjects name the seller, so the message is known for theirs at a glance.
  const from = seller?.name ? ` from ${seller.name}` : '';
  const facts: [string, string][] = [
    ['Product', product],
    ['Amount', formatAmount(notice.amount, notice.currency)],
    ['Transaction', notice.transactionId],
  ];
  switch (kind) {
    case 'purchase.buyer':
      return compose(`Your license for ${product}${from}`, [
        { paragraph: `Thank you for buying ${product}. Here is your license key:` },
        { licenseKey: notice.licenseKey },
        {
          paragraph:
            data.replacesTrial === true
              ? 'Enter it in the software in place of your trial key, which has stopped working. The devices your trial activated are already on this license. Keep this message.'
              : 'Keep this message: the key activates your copy of the software.',
        },
        { facts },
      ]);
    case 'purchase.copy':
      return compose(`License sold: ${product}`, [
        {
          paragraph: `${notice.buyerEmail} bought ${product}. This address receives a copy of every license sold for this product.`,
        },
        { licenseKey: notice.licenseKey },
        { facts: [...facts, ['Buyer', notice.buyerEmail]] },
      ]);
    case 'purchase.seller':
      // Never the key: the seller finds the license with the order, behind their own sign-in.
      return compose(`New sale: ${product}`, [
        { paragraph: `${notice.buyerEmail} bought ${product}. The license was issued with the order.` },
        { facts: [...facts, ['Buyer', notice.buyerEmail], ['Order', notice.orderId]] },
      ]);
    case 'trial.buyer': {
      // A trial has no order or amount: its days and end instead (see queueTrialNotice in checkout).
      const ends = typeof data.trialEndsAt === 'string' ? data.trialEndsAt.slice(0, 10) : '';
      return compose(`Your free trial of ${product}${from}`, [
        { paragraph: `Your free trial of ${product} has started. Here is your trial license key:` },
        { licenseKey: notice.licenseKey },
        {
          paragraph: `The trial ends on ${ends}. When you buy ${product} with this e-mail address, your paid license comes with a new key, sent to you and shown on your receipt, and this trial key stops working; the device your trial activated moves to the paid license.`,
        },
        {
          facts: [
            ['Product', product],
            ['Trial ends', ends],
          ],
        },
      ]);
    }
    case 'license.key_replaced':
      return compose(`Your new license key for ${product}${from}`, [
        {
          paragraph: `The seller of ${product} replaced your license key. Enter this key in the software in place of the old one, which no longer works:`,
        },
        { licenseKey: notice.licenseKey },
        {
          paragraph:
            'Your license, its devices and its expiry are unchanged. Keep this message: the key activates your copy of the software.',
        },
      ]);
    default:
      return null;
  }
}

/**
 * The buyer portal's one-time sign-in link (data: link, minutes). The portal removes the link
 * once it is used; a notice without one has no message.
 */
function renderSignInLink(data: Record<string, unknown>): RenderedMail | null {
  if (typeof data.link !== 'string' || data.link === '') return null;
  const minutes = typeof data.minutes === 'number' ? data.minutes : 15;
  return composeMail('Your sign-in link', [
    { paragraph: 'Open this link to see your licenses, orders and devices:' },
    { link: data.link },
    {
      paragraph: `The link works once, within ${minutes} minutes. If you did not ask for it, ignore this message: nothing happens without it.`,
    },
  ]);
}

/** The seller's logo and name above a message, on a rule in their colour. */
function brandHeader(brand: MailBrand): { text: string; html: string } | null {
  if (!brand.name && !brand.logo) return null;
  const rule = brand.colours ? `border-bottom:4px solid ${escapeHtml(brand.colours.accent)};` : '';
  const logo = brand.logo
    ? `<img src="${escapeHtml(brand.logo.url)}" alt="${escapeHtml(brand.name ?? 'Logo')}" height="40" width="${Math.round((brand.logo.width * 40) / brand.logo.height)}" style="height:40px;width:auto;border:0;vertical-align:middle">`
    : '';
  const name = brand.name
    ? `<strong style="font-size:18px;vertical-align:middle;${brand.logo ? 'margin-left:10px;' : ''}">${escapeHtml(brand.name)}</strong>`
    : '';
  return {
    text: brand.name ?? '',
    html: `<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="${rule}margin:0 0 16px"><tr><td style="padding:0 0 12px">${logo}${name}</td></tr></table>`,
  };
}

function composeMail(subject: string, blocks: Block[], brand: MailBrand | null = null): RenderedMail {
  const header = brand ? brandHeader(brand) : null;
  const text = blocks.map((block) => {
    if ('paragraph' in block) return block.paragraph;
    if ('licenseKey' in block) return `    ${block.licenseKey}`;
    if ('link' in block) return block.link;
    return block.facts.map(([label, value]) => `${label}: ${value}`).join('\n');
  });
  const html = blocks.map((block) => {
    if ('paragraph' in block) return `<p>${escapeHtml(block.paragraph)}</p>`;
    if ('licenseKey' in block)
      return `<p style="font-family:monospace;font-size:1.2em"><strong>${escapeHtml(block.licenseKey)}</strong></p>`;
    if ('link' in block)
      return `<p><a href="${escapeHtml(block.link)}"><strong>Sign in</strong></a></p><p>${escapeHtml(block.link)}</p>`;
    const rows = block.facts.map(
      ([label, value]) => `<tr><th align="left">${escapeHtml(label)}</th><td>${escapeHtml(value)}</td></tr>`,
    );
    return `<table>${rows.join('')}</table>`;
  });
  if (header?.text) text.unshift(header.text);
  if (header) html.unshift(header.html);
  return {
    subject,
    text: `${text.join('\n\n')}\n`,
    html: `<!doctype html>\n<html><body>\n${html.join('\n')}\n</body></html>\n`,
  };
}

function readPurchase(data: Record<string, unknown>): PurchaseNotice {
  const field = (name: keyof PurchaseNotice) => {
    const value = data[name];
    return typeof value === 'string' || typeof value === 'number' ? String(value) : '';
  };
  return {
    orderId: field('orderId'),
    transactionId: field('transactionId'),
    productName: field('productName'),
    amount: field('amount'),
    currency: field('currency'),
    buyerEmail: field('buyerEmail'),
    licenseKey: field('licenseKey'),
  };
}

/** "19.9900" USD → "19.99 USD"; the stored decimal is exact, so no float rounding shows. */
export function formatAmount(amount: string, currency: string): string {
  const exponent = currencyExponent(currency) ?? 2;
  const [whole = '0', fraction = ''] = amount.split('.');
  const shown = exponent === 0 ? whole : `${whole}.${fraction.padEnd(exponent, '0').slice(0, exponent)}`;
  return `${shown} ${currency}`.trim();
}

export function escapeHtml(value: string): string {
  return value.replace(
    /[&<>"']/g,
    (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char] ?? char,
  );
}
