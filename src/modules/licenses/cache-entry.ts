import type * as store from './store.js';

/*
 * What the verification cache (verification-cache.ts) holds for one key, and what a lookup of a
 * key answers.
 */

/**
 * A safety net only (a write that forgot to announce, an edit made by hand in SQL): messages
 * arrive within moments. An entry in use does not expire at its TTL but is read again before it,
 * with others, in the background (cache-refresh.ts). The same on PGlite, where only this node
 * writes: a longer bound would cut the refresh's work, but 2 minutes is the bound docs/licenses.md
 * promises.
 */
export const TTL_MS = 120_000;
/** A license with many devices keeps only this many in its entry; others are asked about. */
const MAX_DEVICES_PER_ENTRY = 64;

/** A license as verification reads it, without the per-request device answer. */
export type LicenseState = Omit<
  NonNullable<Awaited<ReturnType<typeof store.findManyForVerification>>[number]>,
  'device_bound' | 'device_name' | 'device_platform'
>;

/** A license found for a key, and whether the device asked about is bound to it. */
export interface Found {
  state: LicenseState;
  deviceBound: boolean;
  /** The bound device's label as last known; null when the device is not bound. */
  label: store.DeviceLabel | null;
  /** Where and since when the database was read, for `bound`; null when answered from memory. */
  read: { digest: string; since: number } | null;
}

export interface Entry {
  state: LicenseState;
  /** Devices seen bound, with their labels. */
  devices: Map<string, store.DeviceLabel>;
  until: number;
  /** When it was last read or answered from: kept warm for KEEP_WARM_MS (cache-refresh.ts) after. */
  usedAt: number;
}

/** Whether memory answers for `hwuid` from `entry`: no device asked, or one seen bound. */
export function answersFor(entry: Entry, hwuid: string | null): boolean {
  return hwuid === null || entry.devices.has(hwuid);
}

/** The answer memory gives: nothing read, so nothing for `bound` to remember. */
export function fromMemory(entry: Entry, hwuid: string | null): Found {
  const label = hwuid === null ? null : (entry.devices.get(hwuid) ?? null);
  return { state: entry.state, deviceBound: hwuid !== null, label, read: null };
}

/** Remembers a device bound with its label, or forgets it (label null: not bound). */
export function setDevice(
  devices: Map<string, store.DeviceLabel>,
  hwuid: string,
  label: store.DeviceLabel | null,
): void {
  if (!label) devices.delete(hwuid);
  else if (devices.size < MAX_DEVICES_PER_ENTRY || devices.has(hwuid)) devices.set(hwuid, label);
}
