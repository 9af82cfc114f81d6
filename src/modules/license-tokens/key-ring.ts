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
import type { SigningKeyRow } from '../../platform/db/schema.js';
import type { Log } from '../../platform/log.js';
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
}

interface LoadedKey {
  kid: string;
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
 * The RS256 keys that sign license tokens, shared by every node through the database and
 * cached in memory. Private keys never leave this module.
 *
 * While the database is away the keys last read go on signing (verify answers from memory in an
 * outage, and its tokens with it): once a read has failed as unavailable, callers get them at once
 * and the read is tried again behind them, every AWAY_RETRY_MS. Every key this node knew of stays
 * published for a day after a rotation it missed, so `tokensEndBy` keeps what it signs from
 * outliving that.
 */
export function createKeyRing({ db, clock, log }: { db: Db; clock: Clock; log: Log }) {
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
        const loaded = await Promise.all(rows.map(load));
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
        ? cache.loadedAt + ACTIVATION_DELAY_MS + MAX_TOKEN_LIFETIME_SECONDS * 1000 + CLOCK_LEEWAY_MS
        : Number.POSITIVE_INFINITY;
    },

    /** The key that signs now: the most recently activated one. */
    async signingKey(): Promise<LoadedKey | null> {
      const now = clock.now().getTime();
      const active = (await keys()).filter((key) => key.activatesAt.getTime() <= now);
      return active.at(-1) ?? null;
    },

    async publicKey(kid: string): Promise<KeyObject | null> {
      return (await keys()).find((key) => key.kid === kid)?.publicKey ?? null;
    },

    async jwks(): Promise<{ keys: PublicJwk[] }> {
      return { keys: (await keys()).map((key) => key.publicJwk) };
    },

    /** Creates the first key when none exists (first start of a fresh installation). */
    async ensureKey(): Promise<void> {
      await store.createFirstKeyOnce(db, clock.now(), () => generate());
      cache = null;
    },

    /**
     * Publishes a new key now; it starts signing after ACTIVATION_DELAY_MS. The keys it
     * replaces stay published until every token they can have signed has expired.
     */
    async rotate(): Promise<{ kid: string; activatesAt: Date }> {
      const now = clock.now();
      const activatesAt = new Date(now.getTime() + ACTIVATION_DELAY_MS);
      const retireAt = new Date(activatesAt.getTime() + MAX_TOKEN_LIFETIME_SECONDS * 1000 + CLOCK_LEEWAY_MS);
      const key = generate();
      await store.addRotatedKey(db, { ...key, published_at: now, activates_at: activatesAt }, retireAt);
      cache = null;
      log.info({ kid: key.kid, activatesAt }, 'license_token.key.rotated');
      return { kid: key.kid, activatesAt };
    },
  };
}

function generate(): Pick<SigningKeyRow, 'kid' | 'private_pem' | 'public_jwk'> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = publicKey.export({ format: 'jwk' }) as JWK;
  // The kid is the key's RFC 7638 thumbprint: stable, and unique per key.
  const kid = thumbprint(jwk);
  return {
    kid,
    private_pem: privateKey.export({ format: 'pem', type: 'pkcs8' }).toString(),
    public_jwk: { kty: jwk.kty, n: jwk.n, e: jwk.e, kid, alg: 'RS256', use: 'sig' },
  };
}

/** RFC 7638 thumbprint: SHA-256 over the required members in lexicographic order. */
function thumbprint(jwk: JWK): string {
  return createHash('sha256')
    .update(JSON.stringify({ e: jwk.e, kty: jwk.kty, n: jwk.n }))
    .digest('base64url');
}

async function load(row: SigningKeyRow): Promise<LoadedKey> {
  const publicJwk = row.public_jwk as unknown as PublicJwk;
  const pkcs8 = createPrivateKey(row.private_pem).export({ format: 'der', type: 'pkcs8' });
  return {
    kid: row.kid,
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
