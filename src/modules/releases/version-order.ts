import semver from 'semver';
import type { ReleaseChannel } from '../../platform/db/schema.js';

/** A version as the service keeps it: normalised, and its precedence as a sortable string. */
export interface ParsedVersion {
  /** semver's normal form, build metadata kept (`1.2.0-beta.1+linux`). */
  version: string;
  order: string;
  /** The channel the pre-release tag names (`rc.1` → rc), stable for a release; null: none. */
  impliedChannel: ReleaseChannel | null;
}

const PRE_RELEASE_CHANNELS: readonly ReleaseChannel[] = ['rc', 'beta', 'alpha', 'dev'];
/** Digits of a version number in the order string: any number semver accepts (≤ 2^53 - 1). */
const WIDTH = 16;
const padded = (n: number) => String(n).padStart(WIDTH, '0');

/**
 * Parses a semantic version (a leading `v` is forgiven) with semver, the library npm uses; null
 * when it is not one.
 *
 * The order string is written here because semantic versioning's precedence is not an order the
 * database knows: compared byte by byte (collation "C"), `a.order < b.order` exactly when
 * `semver.lt(a, b)`. Major, minor and patch are zero-padded; a release ends in `~`, which sorts
 * after the `!` that starts any pre-release; pre-release identifiers are separated by a space
 * (below every character an identifier may hold, so a shorter list of equal identifiers sorts
 * first), numeric ones as `0` and the padded number (numeric below alphanumeric, compared as
 * numbers), alphanumeric ones as `1` and the text (compared in ASCII order).
 */
export function parseVersion(text: string): ParsedVersion | null {
  const parsed = semver.parse(text.trim().replace(/^v/i, ''));
  if (!parsed) return null;
  const core = `${padded(parsed.major)}.${padded(parsed.minor)}.${padded(parsed.patch)}`;
  const pre = parsed.prerelease;
  const order =
    pre.length === 0
      ? `${core}~`
      : `${core}!${pre.map((id) => (typeof id === 'number' ? `0${padded(id)}` : `1${id}`)).join(' ')}`;
  const first = String(pre[0] ?? '').toLowerCase();
  const impliedChannel =
    pre.length === 0 ? 'stable' : (PRE_RELEASE_CHANNELS.find((channel) => first.startsWith(channel)) ?? null);
  const build = parsed.build.length > 0 ? `+${parsed.build.join('.')}` : '';
  return { version: `${parsed.version}${build}`, order, impliedChannel };
}
