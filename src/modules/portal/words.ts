import type { BuyerReleaseOutcome } from '../licenses/index.js';
import type { HolderRefusal } from '../releases/index.js';

/**
 * What the portal says in words rather than codes: statuses, dates (UTC), file sizes, release
 * channels, and why a device release or a download was refused.
 */

const STATUS_WORDS: Record<string, string> = {
  active: 'Active',
  trial: 'Trial',
  suspended: 'Suspended',
  revoked: 'Revoked',
  expired: 'Expired',
  paid: 'Paid',
  canceled: 'Canceled',
};

/** A status as the buyer reads it. */
export const statusWord = (status: string) => STATUS_WORDS[status] ?? status;

/** A date, in UTC: Mar 2, 2026. */
export const day = (at: Date) =>
  new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeZone: 'UTC' }).format(at);
/** A moment, in UTC: Mar 2, 2026, 9:00 AM UTC. */
export const moment = (at: Date) =>
  `${new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }).format(at)} UTC`;

/** Why a device release was refused, and when it can be done. */
export function releaseRefusal(outcome: Exclude<BuyerReleaseOutcome, { released: true }>): string {
  if (outcome.code === 'device_bound_offline') {
    return `This device runs on a license file valid until ${moment(outcome.releasableAt)}: it can be released here from then on. The seller’s support can release it sooner.`;
  }
  if (outcome.nextReleaseAt === null) {
    return 'Devices of this license can be released by the seller’s support only.';
  }
  return `This license allows ${outcome.allowed} device releases in any ${outcome.periodDays} days, and they are used up. The next release is possible from ${moment(outcome.nextReleaseAt)}.`;
}

/** Why a license's status keeps every release from it. */
export const DOWNLOAD_REFUSALS: Record<HolderRefusal, string> = {
  license_expired: 'This license has expired, and with it its downloads. Renew it to download again.',
  license_suspended: 'This license is suspended: its downloads are paused until the seller reinstates it.',
  license_revoked: 'This license was revoked: it grants no downloads.',
};

/** Why a download link was refused after the page was drawn: the license's status, or the release's rules. */
export function downloadRefusal(error: { code: string; message: string }): string {
  if (error.code in DOWNLOAD_REFUSALS) return DOWNLOAD_REFUSALS[error.code as HolderRefusal];
  return 'This file is not included in your license any more. Reload the page to see what it includes.';
}

/** Why the newest release is not one the license may have (the release rules' codes). */
export function withheldWords({ version, code }: { version: string; code: string }): string {
  if (code === 'feature_not_granted')
    return `Version ${version} needs a plan or feature this license does not include.`;
  if (code === 'channel_not_granted')
    return `Version ${version} is a test release, which this license does not receive.`;
  if (code === 'license_expired')
    return `This license expired before version ${version} was published: it keeps the releases published before its expiry. Renew it to download newer ones.`;
  return `Version ${version} is not included in this license.`;
}

export const CHANNEL_WORDS: Record<string, string> = {
  stable: 'Stable',
  rc: 'Release candidate',
  beta: 'Beta',
  alpha: 'Alpha',
  dev: 'Development build',
};

/** A file's size as people read it: 812 KB, 12.4 MB, 1.2 GB. */
export function bytes(size: number): string {
  const units = ['bytes', 'KB', 'MB', 'GB'];
  let value = size;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return unit === 0 ? `${size} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}
