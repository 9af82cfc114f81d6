import { hash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import DataLoader from 'dataloader';
import type { Db } from '../../platform/db/database.js';
import { isDatabaseUnavailable } from '../../platform/db/errors.js';
import type { Notifications } from '../../platform/db/notifications.js';
import type { Log } from '../../platform/log.js';
import { announceLicense, announceSeller, listenForChanges } from './cache-channel.js';
import {
  answersFor,
  type Entry,
  type Found,
  fromMemory,
  type LicenseState,
  setDevice,
  TTL_MS,
} from './cache-entry.js';
import { createCacheRefresh, REFRESH_EVERY_MS } from './cache-refresh.js';
import * as store from './store.js';

/**
 * The verification cache, one per node, used by verification.ts for every lookup of a key (it
 * reads the store itself on a miss). It holds what verification decides with (status, expiry,
 * e-mail, metadata, device limit, features and the product's, whether it floats and its seats and
 * lease (for the per-key limit), app and how its tokens are signed, seller and tier, and the
 * devices seen bound with their labels; never seats held, which are read each time) for recently
 * verified licenses, keyed by a digest of the canonical key (keys are not kept), so a repeat
 * verify of a known key and device reads nothing. Unknown keys are not held.
 *
 * Bound: MAX_ENTRIES, least recently used out first; what an entry answers while the database
 * answers was read at most TTL_MS ago. An entry used in the last KEEP_WARM_MS is read again
 * before it expires, many in one statement (`refreshDue`, every REFRESH_EVERY_MS), so a license
 * its client checks every few minutes is not a miss every TTL_MS, and the database sees one read
 * per REFRESH_BATCH licenses instead of one each.
 *
 * Invalidated by every write to what it holds, inside the writing transaction: `announceLicense`
 * (status, expiry, e-mail, metadata, device limit, features, a device released) and
 * `announceSeller` (tier, account deleted, a product's features, an app's tokenAlgorithm: rare, so
 * the whole seller)). Every node hears these on LISTEN and drops the entries; the writing node also
 * calls `forget…` itself (after its commit where it owns the transaction), so its own next answer
 * is already fresh. A device binding is not
 * announced: it only adds, and a node that has not seen a device bound asks the database. Licenses
 * are never deleted, and an app with licenses cannot be. A device's label (name, platform) is not
 * announced either: the node that writes it updates its own entry (`relabeled`), and another node
 * holding the old label at worst sends one write that changes nothing before it learns the new
 * one, or reads it in the background refresh. Token revocation is not held here:
 * introspection always reads the live state.
 *
 * A lost channel: the moment the listener's connection breaks no entry answers as fresh any more
 * (each one's deadline is brought back to that moment) and nothing new is stored; once it is back
 * (the listen connection re-listens before reporting the gap) every entry is flushed. Until this
 * node has heard its own first message (the listener may still be connecting) it stores nothing
 * either. A read that began before an invalidation is never stored after it (the invalidation
 * log below).
 *
 * An outage: the database is always asked first, and only a read that fails because the database
 * is unavailable (DatabaseUnavailableError) is answered from an entry still here: for a key with
 * no device or a device seen bound, and for at most `outageGraceMs` after the entry stopped being
 * kept current, that is after the channel was lost, or, the channel up, after its deadline passed
 * (its background read failed). A change this node had heard of dropped the entry, so it is never
 * answered; one committed and not heard of (the channel down) may be missed for that long. A
 * read that succeeds while the channel is down is not stored, but the entry takes its answer (the
 * database wins). Devices not seen bound, seats and every write still fail: 503.
 *
 * Its parts: what an entry holds (cache-entry.ts), the background refresh (cache-refresh.ts) and
 * the change channel (cache-channel.ts).
 */
const MAX_ENTRIES = 50_000;
/** Keys read in one statement on a miss. */
const LOOKUP_BATCH = 64;
/** Invalidations remembered for reads in flight; a read older than the log is not stored. */
const INVALIDATION_LOG = 1_024;

/** Who was invalidated at one epoch: a license, a seller's licenses, or (neither) everything. */
interface Invalidation {
  epoch: number;
  licenseId?: string;
  sellerId?: string;
}

export type VerificationCache = ReturnType<typeof createVerificationCache>;

export function createVerificationCache({
  db,
  log,
  notifications,
  outageGraceMs,
  now = () => performance.now(),
  refreshEveryMs = REFRESH_EVERY_MS,
}: {
  db: Db;
  log: Log;
  notifications: Pick<Notifications, 'listen' | 'onGap' | 'onLost'>;
  /** How long an entry no longer kept current may answer while the database is away; 0: never. */
  outageGraceMs: number;
  /** Milliseconds on a monotonic clock; tests move it by hand. */
  now?: () => number;
  /** 0: no timer (tests call `refreshDue` themselves). */
  refreshEveryMs?: number;
}) {
  const entries = new Map<string, Entry>(); // digest → entry, least recently used first
  const digestOfLicense = new Map<string, string>();
  const invalidations: Invalidation[] = [];
  let epoch = 0;
  let listening = false;
  let started = false;
  let closed = false;
  // Whether verifies are being answered from memory for want of the database (logged once).
  let away = false;
  let timer: NodeJS.Timeout | null = null;
  // The misses of one turn of the event loop, read in one statement (up to LOOKUP_BATCH keys):
  // on PGlite a statement's cost is mostly fixed (measured: 1.6–1.9 ms for one key, 0.19 ms a
  // key for 16), and on PostgreSQL it is one round trip instead of many. Nothing is memoized:
  // every load reads the database.
  const lookups = new DataLoader<
    store.VerificationAsk,
    Awaited<ReturnType<typeof store.findManyForVerification>>[number]
  >((asked) => store.findManyForVerification(db, asked), {
    cache: false,
    maxBatchSize: LOOKUP_BATCH,
    batchScheduleFn: (send) => setImmediate(send),
  });
  const refresh = createCacheRefresh({
    db,
    log,
    entries,
    now,
    refreshEveryMs,
    epoch: () => epoch,
    listening: () => listening,
    closed: () => closed,
    invalidatedSince,
    drop,
  });

  function drop(digest: string): void {
    const entry = entries.get(digest);
    if (!entry) return;
    entries.delete(digest);
    digestOfLicense.delete(entry.state.id);
  }

  function invalidate(which: Omit<Invalidation, 'epoch'>): void {
    epoch++;
    invalidations.push({ epoch, ...which });
    if (invalidations.length > INVALIDATION_LOG) invalidations.shift();
  }

  /** Whether anything touching this license was invalidated after `since`. */
  function invalidatedSince(since: number, state: LicenseState): boolean {
    if (since === epoch) return false;
    const oldest = invalidations[0];
    if (!oldest || oldest.epoch > since + 1) return true;
    for (let i = invalidations.length - 1; i >= 0; i--) {
      const entry = invalidations[i] as Invalidation;
      if (entry.epoch <= since) break;
      if (entry.licenseId === undefined && entry.sellerId === undefined) return true;
      if (entry.licenseId === state.id || entry.sellerId === state.user_id) return true;
    }
    return false;
  }

  function forgetLicense(licenseId: string): void {
    invalidate({ licenseId });
    const digest = digestOfLicense.get(licenseId);
    if (digest) drop(digest);
  }

  function forgetSeller(sellerId: string): void {
    invalidate({ sellerId });
    for (const [digest, entry] of entries) if (entry.state.user_id === sellerId) drop(digest);
  }

  function flush(): void {
    invalidate({});
    entries.clear();
    digestOfLicense.clear();
  }

  /** The channel is lost: no entry answers as fresh from now on; each stays for an outage. */
  function distrust(): void {
    const at = now();
    for (const entry of entries.values()) if (entry.until > at) entry.until = at;
  }

  /** The entry for a digest if still within its TTL; counts as a use for the LRU order. */
  function fresh(digest: string): Entry | undefined {
    const entry = entries.get(digest);
    if (!entry) return undefined;
    const at = now();
    if (entry.until <= at) {
      // Read again; kept meanwhile for an outage, within its grace.
      if (!withinGrace(entry, at)) drop(digest);
      return undefined;
    }
    entries.delete(digest);
    entries.set(digest, entry);
    entry.usedAt = at;
    return entry;
  }

  /**
   * Stores what a read begun at `since` found, and whether `hwuid` is bound. A fresh entry of the
   * same license keeps its devices and its deadline (an entry never outlives its TTL). The channel
   * down, nothing is stored, but an entry kept for an outage takes the answer (or goes, when the
   * license changed since the read began): what the database said last is what memory says.
   */
  function remember(
    digest: string,
    since: number,
    state: LicenseState,
    hwuid: string | null,
    label: store.DeviceLabel | null,
  ): void {
    const known = entries.get(digest);
    if (!listening) {
      if (!known) return;
      if (known.state.id !== state.id || invalidatedSince(since, state)) {
        drop(digest);
        return;
      }
      known.state = state;
      if (hwuid !== null) setDevice(known.devices, hwuid, label);
      return;
    }
    if (invalidatedSince(since, state)) return;
    const kept = known && known.state.id === state.id && known.until > now() ? known : null;
    const devices = new Map(kept?.devices);
    if (hwuid !== null) setDevice(devices, hwuid, label);
    drop(digest);
    entries.set(digest, { state, devices, until: kept?.until ?? now() + TTL_MS, usedAt: now() });
    digestOfLicense.set(state.id, digest);
    if (entries.size > MAX_ENTRIES) {
      const oldest = entries.keys().next().value;
      if (oldest !== undefined) drop(oldest);
    }
  }

  /** Whether an entry past its deadline may still answer, in an outage, at `at`. */
  function withinGrace(entry: Entry, at: number): boolean {
    return entry.until + outageGraceMs > at;
  }

  /**
   * A miss: the license read (with the misses of this turn of the event loop), then remembered.
   * A read the database could not serve is answered from an entry kept for an outage, if any.
   */
  async function read(digest: string, canonicalKey: string, hwuid: string | null): Promise<Found | null> {
    const since = epoch;
    let row: Awaited<ReturnType<typeof lookups.load>>;
    try {
      row = await lookups.load({ key: canonicalKey, hwuid });
    } catch (err) {
      const held = isDatabaseUnavailable(err) ? heldFor(digest, hwuid) : undefined;
      if (!held) throw err;
      return fromMemory(held, hwuid);
    }
    if (away) {
      away = false;
      log.info('license.verify.reading_again');
    }
    if (!row) {
      // Gone (its seller deleted), or its key changed by hand: not kept for an outage either.
      drop(digest);
      return null;
    }
    const { device_bound, device_name, device_platform, ...state } = row;
    const label = device_bound ? { name: device_name, platform: device_platform } : null;
    remember(digest, since, state, hwuid, label);
    return { state, deviceBound: Boolean(device_bound), label, read: { digest, since } };
  }

  /** The entry that answers for `digest` and `hwuid` while the database is away, if one may. */
  function heldFor(digest: string, hwuid: string | null): Entry | undefined {
    const entry = entries.get(digest);
    if (!entry || !withinGrace(entry, now()) || !answersFor(entry, hwuid)) return undefined;
    if (!away) {
      away = true;
      log.warn({ graceMs: outageGraceMs }, 'license.verify.answering_from_memory');
    }
    return entry;
  }

  /** Listens once; stores nothing until this node hears its own probe on the channel. */
  function start(): void {
    if (started) return;
    started = true;
    // Deaf, the cache could miss a change made by another node: nothing answers as fresh until it
    // hears again, so every verify reads the database meanwhile (and, in an outage, is answered
    // from what was held, within the grace).
    if (refreshEveryMs > 0) {
      timer = setInterval(() => void refresh.refreshDue(), refreshEveryMs);
      timer.unref();
    }
    listenForChanges({
      db,
      log,
      notifications,
      heard: () => {
        listening = true;
      },
      lost: () => {
        listening = false;
        log.info({ entries: entries.size }, 'license.verify.cache_distrusted');
        distrust();
      },
      gap: () => {
        flush();
        listening = true;
      },
      licenseChanged: forgetLicense,
      sellerChanged: forgetSeller,
      probing: () => !listening && !closed,
    });
  }

  return {
    /**
     * The license for a canonical key, and whether `hwuid` is bound to it: from memory for a
     * known key with no device or a device seen bound, otherwise in one read, then remembered.
     */
    find(canonicalKey: string, hwuid: string | null): Found | Promise<Found | null> {
      start();
      // One-shot hash: a Hash object per verify cost several per cent of the main thread.
      const digest = hash('sha256', canonicalKey, 'base64url');
      const cached = fresh(digest);
      // Answered from memory without a promise: the hot path of a verify (see verification.ts).
      if (cached && answersFor(cached, hwuid)) return fromMemory(cached, hwuid);
      return read(digest, canonicalKey, hwuid);
    },

    /** Remembers a device this node just bound, unless the license changed since it was read. */
    bound(found: Found, hwuid: string, label: store.DeviceLabel): void {
      if (found.read) remember(found.read.digest, found.read.since, found.state, hwuid, label);
    },

    /**
     * Remembers the label this node just wrote for a bound device, on the entry that holds the
     * license under this key (if any still does).
     */
    relabeled(canonicalKey: string, licenseId: string, hwuid: string, label: store.DeviceLabel): void {
      const entry = entries.get(hash('sha256', canonicalKey, 'base64url'));
      if (entry && entry.state.id === licenseId && entry.devices.has(hwuid)) entry.devices.set(hwuid, label);
    },

    /** Sent inside the writing transactions (cache-channel.ts). */
    announceLicense,
    announceSeller,
    forgetLicense,
    forgetSeller,

    /** Reads again the entries due (the timer's work), and says how many; for tests. */
    refreshDue: refresh.refreshDue,

    /** Stops refreshing (before the database closes), once a refresh under way has ended. */
    async close(): Promise<void> {
      started = true;
      closed = true;
      if (timer) clearInterval(timer);
      timer = null;
      await refresh.underWay();
    },

    /** Whether entries are stored yet (this node has heard its own probe); for tests. */
    get listening(): boolean {
      return listening;
    },
  };
}
