import {
  createHash,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type KeyObject,
  webcrypto,
} from 'node:crypto';
import type { JWK } from 'jose';
import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import { isDatabaseUnavailable } from '../../platform/db/errors.js';
import type { SigningKeyPurpose, SigningKeyRow } from '../../platform/db/schema.js';
import type { Log } from '../../platform/log.js';
import { isPlainPem, type KeySealer } from './key-sealing.js';
import * as store from './store.js';
import { MAX_TOKEN_LIFETIME_SECONDS } from './token-lifetime.js';

/** How long a node trusts its in-memory copy of the keys before reading them again. */
export const KEY_CACHE_MS = 30_000;
/** How long clients and HTTP caches may keep the key set (its Cache-Control max-age). */
export const JWKS_MAX_AGE_SECONDS = 60;
/**
 * A rotated key is published this long before it signs: longer than any node's key cache and
 * any cached copy of the key set, so whoever sees a token with the new kid can fetch a set
 * that has it.
 */
export const ACTIVATION_DELAY_MS = JWKS_MAX_AGE_SECONDS * 1000 + KEY_CACHE_MS + 30_000;
const CLOCK_LEEWAY_MS = 5 * 60_000;
/** How long keys a rotation replaces stay published after the new key starts signing. */
const RETIRED_AFTER_MS = MAX_TOKEN_LIFETIME_SECONDS * 1000 + CLOCK_LEEWAY_MS;
/** While the database is away, how often the keys are asked for again (behind the answers). */
const AWAY_RETRY_MS = 1_000;

/** What the key set publishes for each key. */
export interface PublicJwk {
  kty: string;
  n: string;
  e: string;
  kid: string;
  alg: 'RS256';
  use: 'sig';
  /** `token`: signs license tokens, rotated. `offline`: signs license files and revocation lists, kept. */
  purpose: SigningKeyPurpose;
}

interface LoadedKey {
  kid: string;
  purpose: SigningKeyPurpose;
  publicJwk: PublicJwk;
  publicKey: KeyObject;
  /** Imported once per load: WebCrypto signs on libuv's thread pool, off the event loop. */
  privateKey: webcrypto.CryptoKey;
  /** The token header for this key, base64url-encoded once: `{"alg":"RS256","typ":"JWT","kid":…}`. */
  encodedHeader: string;
  activatesAt: Date;
}

export type KeyRing = ReturnType<typeof createKeyRing>;

/**
 * The RS256 keys, shared by every node through the database and cached in memory: token keys
 * sign license tokens and are rotated; the offline key signs license files and revocation lists
 * and stays, so machines that hold a copy of the key set keep trusting what it signs after a
 * rotation. Private keys never leave this module, and are stored sealed (key-sealing.ts).
 *
 * While the database is away the keys last read go on signing (verify answers from memory in an
 * outage, and its tokens with it): once a read has failed as unavailable, callers get them at once
 * and the read is tried again behind them, every AWAY_RETRY_MS. Every key this node knew of stays
 * published for a day after a rotation it missed, so `tokensEndBy` keeps what it signs from
 * outliving that.
 */
export function createKeyRing({
  db,
  clock,
  log,
  sealer,
}: {
  db: Db;
  clock: Clock;
  log: Log;
  sealer: KeySealer;
}) {
  let cache: { keys: LoadedKey[]; loadedAt: number } | null = null;
  let loading: Promise<LoadedKey[]> | null = null;
  let away = false;
  let triedAt = 0;

  async function keys(): Promise<LoadedKey[]> {
    const now = clock.now().getTime();
    if (cache && now - cache.loadedAt < KEY_CACHE_MS) return cache.keys;
    if (!loading && !(away && now - triedAt < AWAY_RETRY_MS)) {
      triedAt = now;
      loading = read(now).finally(() => {
        loading = null;
      });
      // Away, nobody waits for it: a failure of another kind is then only logged.
      loading.catch((err) => {
        if (away) log.warn({ err: { message: err.message } }, 'license_token.keys.read_failed');
      });
    }
    if (away && cache) return cache.keys;
    return loading as Promise<LoadedKey[]>;
  }

  function read(now: number): Promise<LoadedKey[]> {
    return store.publishedKeys(db, new Date(now)).then(
      async (rows) => {
        const loaded = await Promise.all(rows.map((row) => load(row, sealer)));
        cache = { keys: loaded, loadedAt: now };
        if (away) log.info('license_token.keys.read_again');
        away = false;
        return loaded;
      },
      (err) => {
        if (!cache || !isDatabaseUnavailable(err)) throw err;
        if (!away) log.warn({ err: { message: err.message } }, 'license_token.keys.kept');
        away = true;
        return cache.keys;
      },
    );
  }

  return {
    /**
     * Epoch milliseconds no token signed now may outlive: none while the keys are current. Keys
     * kept through an outage are all published at least until a day (a token's longest life)
     * after the rotation that would retire them starts signing, which is after they were read.
     */
    tokensEndBy(): number {
      return away && cache
        ? cache.loadedAt + ACTIVATION_DELAY_MS + RETIRED_AFTER_MS
        : Number.POSITIVE_INFINITY;
    },

    /** The key of `purpose` that signs now: the most recently activated one. */
    async signingKey(purpose: SigningKeyPurpose = 'token'): Promise<LoadedKey | null> {
      const now = clock.now().getTime();
      const active = (await keys()).filter(
        (key) => key.purpose === purpose && key.activatesAt.getTime() <= now,
      );
      return active.at(-1) ?? null;
    },

    /** A published key and what it signs. */
    async publicKey(kid: string): Promise<{ key: KeyObject; purpose: SigningKeyPurpose } | null> {
      const found = (await keys()).find((key) => key.kid === kid);
      return found ? { key: found.publicKey, purpose: found.purpose } : null;
    },

    async jwks(): Promise<{ keys: PublicJwk[] }> {
      return { keys: (await keys()).map((key) => key.publicJwk) };
    },

    /**
     * Creates the first token key and the offline key when there is none: on the first start of
     * a fresh installation, and the offline key on the first start of an upgraded one.
     */
    async ensureKey(): Promise<void> {
      for (const purpose of ['token', 'offline'] as const) {
        await store.createFirstKeyOnce(db, clock.now(), purpose, () => generate(purpose, sealer));
      }
      cache = null;
    },

    /**
     * Seals every stored private key that is not sealed under the first key-encryption key: the
     * PEM of rows an earlier version wrote, and keys sealed under a key-encryption key being
     * rotated out. Run at start-up; throws a ConfigError naming the setting when a key opens
     * under none of the keys set, so a node with a wrong setting does not start.
     */
    async sealStoredKeys(): Promise<number> {
      const resealed = await store.resealKeys(db, (kid, stored) =>
        !isPlainPem(stored) && sealer.sealedUnderCurrent(stored)
          ? null
          : sealer.seal(kid, privateKeyOf(kid, stored, sealer)),
      );
      if (resealed > 0) log.info({ keys: resealed }, 'license_token.keys.sealed');
      cache = null;
      return resealed;
    },

    /**
     * Publishes a new key of `purpose` now; it starts signing after ACTIVATION_DELAY_MS. The keys
     * of that purpose it replaces stay published until every token and revocation list they can
     * have signed has expired, and, for a key that signed license files, until those have.
     */
    async rotate(purpose: SigningKeyPurpose = 'token'): Promise<{ kid: string; activatesAt: Date }> {
      const now = clock.now();
      const activatesAt = new Date(now.getTime() + ACTIVATION_DELAY_MS);
      const retireAt = new Date(activatesAt.getTime() + RETIRED_AFTER_MS);
      const key = generate(purpose, sealer);
      await store.addRotatedKey(db, { ...key, published_at: now, activates_at: activatesAt }, retireAt);
      cache = null;
      log.info({ kid: key.kid, purpose, activatesAt }, 'license_token.key.rotated');
      return { kid: key.kid, activatesAt };
    },
  };
}

function generate(
  purpose: SigningKeyPurpose,
  sealer: KeySealer,
): Pick<SigningKeyRow, 'kid' | 'sealed_private_key' | 'public_jwk' | 'purpose'> {
  // Two primes, though RFC 8017 allows three and in theory they sign twice as fast: OpenSSL signs
  // two-prime 2048-bit keys on an AVX-512 IFMA path, and three primes measured 1,760 signatures a
  // second against 3,950 on the bench machine.
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = publicKey.export({ format: 'jwk' }) as JWK;
  // The kid is the key's RFC 7638 thumbprint: stable, and unique per key.
  const kid = thumbprint(jwk);
  return {
    kid,
    purpose,
    sealed_private_key: sealer.seal(kid, privateKey.export({ format: 'der', type: 'pkcs8' })),
    public_jwk: { kty: jwk.kty, n: jwk.n, e: jwk.e, kid, alg: 'RS256', use: 'sig' },
  };
}

/** RFC 7638 thumbprint: SHA-256 over the required members in lexicographic order. */
function thumbprint(jwk: JWK): string {
  return createHash('sha256')
    .update(JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n }))
    .digest('base64url');
}

/** The private key (PKCS#8 DER) of a stored row: sealed, or the PEM of a row not yet sealed. */
function privateKeyOf(kid: string, stored: string, sealer: KeySealer): Buffer {
  return isPlainPem(stored)
    ? createPrivateKey(stored).export({ format: 'der', type: 'pkcs8' })
    : sealer.open(kid, stored);
}

async function load(row: SigningKeyRow, sealer: KeySealer): Promise<LoadedKey> {
  const publicJwk = { ...(row.public_jwk as unknown as PublicJwk), purpose: row.purpose };
  // A row another node has migrated but not yet sealed holds the PEM for a moment.
  const pkcs8 = privateKeyOf(row.kid, row.sealed_private_key, sealer);
  return {
    kid: row.kid,
    purpose: row.purpose,
    publicJwk,
    publicKey: createPublicKey({ key: publicJwk as never, format: 'jwk' }),
    privateKey: await webcrypto.subtle.importKey(
      'pkcs8',
      pkcs8,
      { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
      false,
      ['sign'],
    ),
    encodedHeader: Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: row.kid })).toString(
      'base64url',
    ),
    activatesAt: row.activates_at,
  };
}
