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
import type { SigningAlgorithm, SigningKeyPurpose, SigningKeyRow } from '../../platform/db/schema.js';
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

/** What the key set publishes for each key: an RSA key (RS256) or an Ed25519 key (EdDSA). */
export type PublicJwk = (
  | { kty: 'RSA'; n: string; e: string; alg: 'RS256' }
  | { kty: 'OKP'; crv: 'Ed25519'; x: string; alg: 'EdDSA' }
) & {
  kid: string;
  use: 'sig';
  /** `token`: signs license tokens, rotated. `offline`: signs license files and revocation lists, kept. */
  purpose: SigningKeyPurpose;
};

/** The algorithm apps sign with unless they choose another (the interface's RS256). */
export const DEFAULT_SIGNING_ALGORITHM: SigningAlgorithm = 'RS256';
export const SIGNING_ALGORITHMS: readonly SigningAlgorithm[] = ['RS256', 'EdDSA'];

/** The WebCrypto form of each JWS algorithm, to import a private key and sign with it. */
const WEBCRYPTO: Record<SigningAlgorithm, { name: string; hash?: string }> = {
  RS256: { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' },
  EdDSA: { name: 'Ed25519' },
};

interface LoadedKey {
  kid: string;
  purpose: SigningKeyPurpose;
  algorithm: SigningAlgorithm;
  publicJwk: PublicJwk;
  publicKey: KeyObject;
  /**
   * The compact JWS of `claims`, signed with this key. It is written here rather than through
   * jose's SignJWT: the header is encoded once per key, and the signature, the one costly step
   * (RS256 above all), runs on libuv's thread pool.
   */
  sign(claims: object): Promise<string>;
  activatesAt: Date;
}

export type KeyRing = ReturnType<typeof createKeyRing>;

/**
 * Where a key is in its life: published ahead of signing (`pending`), the one its purpose and
 * algorithm sign with (`signing`), replaced but still in the key set for what it signed
 * (`verifying`), gone from the key set (`retired`).
 */
export type KeyState = 'pending' | 'signing' | 'verifying' | 'retired';

/** A key as the operator sees it (`licensing keys list`): no private part. */
export interface KeyListing {
  kid: string;
  purpose: SigningKeyPurpose;
  algorithm: SigningAlgorithm;
  publishedAt: Date;
  activatesAt: Date;
  unpublishAt: Date | null;
  state: KeyState;
}

/**
 * The signing keys, shared by every node through the database and cached in memory: token keys
 * sign license tokens and are rotated; the offline key signs license files and revocation lists
 * and stays, so machines that hold a copy of the key set keep trusting what it signs after a
 * rotation. Each purpose has an RSA key (RS256, the default) and an Ed25519 key (EdDSA), made,
 * sealed, rotated and published alike; an app's tokenAlgorithm picks which signs for it. Private
 * keys never leave this module, and are stored sealed (key-sealing.ts).
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

    /** The key of `purpose` and `algorithm` that signs now: the most recently activated one. */
    async signingKey(
      purpose: SigningKeyPurpose = 'token',
      algorithm: SigningAlgorithm = DEFAULT_SIGNING_ALGORITHM,
    ): Promise<LoadedKey | null> {
      const now = clock.now().getTime();
      const active = (await keys()).filter(
        (key) => key.purpose === purpose && key.algorithm === algorithm && key.activatesAt.getTime() <= now,
      );
      return active.at(-1) ?? null;
    },

    /** A published key, what it signs and the one algorithm it verifies. */
    async publicKey(
      kid: string,
    ): Promise<{ key: KeyObject; purpose: SigningKeyPurpose; algorithm: SigningAlgorithm } | null> {
      const found = (await keys()).find((key) => key.kid === kid);
      return found ? { key: found.publicKey, purpose: found.purpose, algorithm: found.algorithm } : null;
    },

    /**
     * Every key, retired ones too, with its dates and its state now, oldest activation first.
     * Read from the database rather than the cache, and without the private keys.
     */
    async list(): Promise<KeyListing[]> {
      const now = clock.now();
      const rows = await store.describeKeys(db, now);
      // The newest activated key of a purpose and algorithm signs, as signingKey() picks it.
      const signing = new Map<string, string>();
      for (const row of rows) {
        if (row.published && row.activates_at <= now) signing.set(`${row.purpose} ${row.algorithm}`, row.kid);
      }
      const stateOf = (row: (typeof rows)[number]): KeyState => {
        if (!row.published) return row.published_at > now ? 'pending' : 'retired';
        if (row.activates_at > now) return 'pending';
        return signing.get(`${row.purpose} ${row.algorithm}`) === row.kid ? 'signing' : 'verifying';
      };
      return rows.map((row) => ({
        kid: row.kid,
        purpose: row.purpose,
        algorithm: row.algorithm,
        publishedAt: row.published_at,
        activatesAt: row.activates_at,
        unpublishAt: row.unpublish_at,
        state: stateOf(row),
      }));
    },

    async jwks(): Promise<{ keys: PublicJwk[] }> {
      return { keys: (await keys()).map((key) => key.publicJwk) };
    },

    /**
     * Creates the first key of each purpose and algorithm there is none of: all four on the first
     * start of a fresh installation; on the first start of an upgraded one, the keys its version
     * did not have (the offline key, the Ed25519 keys).
     */
    async ensureKey(): Promise<void> {
      for (const purpose of ['token', 'offline'] as const) {
        for (const algorithm of SIGNING_ALGORITHMS) {
          await store.createFirstKeyOnce(db, clock.now(), purpose, algorithm, () =>
            generate(purpose, algorithm, sealer),
          );
        }
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
     * Publishes a new key of `purpose` for each algorithm now, in one transaction; they start
     * signing after ACTIVATION_DELAY_MS. The keys of that purpose they replace stay published
     * until every token and revocation list they can have signed has expired, and, for a key
     * that signed license files, until those have.
     */
    async rotate(
      purpose: SigningKeyPurpose = 'token',
    ): Promise<{ kids: Record<SigningAlgorithm, string>; activatesAt: Date }> {
      const now = clock.now();
      const activatesAt = new Date(now.getTime() + ACTIVATION_DELAY_MS);
      const retireAt = new Date(activatesAt.getTime() + RETIRED_AFTER_MS);
      const added = SIGNING_ALGORITHMS.map((algorithm) => generate(purpose, algorithm, sealer));
      await store.addRotatedKeys(
        db,
        purpose,
        added.map((key) => ({ ...key, published_at: now, activates_at: activatesAt })),
        retireAt,
      );
      cache = null;
      const kids = Object.fromEntries(added.map((key) => [key.algorithm, key.kid])) as Record<
        SigningAlgorithm,
        string
      >;
      log.info({ kids, purpose, activatesAt }, 'license_token.key.rotated');
      return { kids, activatesAt };
    },
  };
}

function generate(
  purpose: SigningKeyPurpose,
  algorithm: SigningAlgorithm,
  sealer: KeySealer,
): Pick<SigningKeyRow, 'kid' | 'sealed_private_key' | 'public_jwk' | 'purpose' | 'algorithm'> {
  // Two primes, though RFC 8017 allows three and in theory they sign twice as fast: OpenSSL signs
  // two-prime 2048-bit keys on an AVX-512 IFMA path, and three primes measured 1,760 signatures a
  // second against 3,950 on the bench machine.
  const { privateKey, publicKey } =
    algorithm === 'EdDSA'
      ? generateKeyPairSync('ed25519')
      : generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = publicKey.export({ format: 'jwk' }) as JWK;
  // The kid is the key's RFC 7638 thumbprint: stable, and unique per key.
  const kid = thumbprint(jwk);
  const members =
    algorithm === 'EdDSA'
      ? { kty: jwk.kty, crv: jwk.crv, x: jwk.x, kid, alg: algorithm, use: 'sig' }
      : { kty: jwk.kty, n: jwk.n, e: jwk.e, kid, alg: algorithm, use: 'sig' };
  return {
    kid,
    purpose,
    algorithm,
    sealed_private_key: sealer.seal(kid, privateKey.export({ format: 'der', type: 'pkcs8' })),
    public_jwk: members,
  };
}

/** RFC 7638 thumbprint: SHA-256 over the required members of the key type, in lexicographic order. */
function thumbprint(jwk: JWK): string {
  const required =
    jwk.kty === 'OKP' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x } : { e: jwk.e, kty: jwk.kty, n: jwk.n };
  return createHash('sha256').update(JSON.stringify(required)).digest('base64url');
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
  const params = WEBCRYPTO[row.algorithm];
  // Imported once per load: WebCrypto signs on libuv's thread pool, off the event loop.
  const privateKey = await webcrypto.subtle.importKey('pkcs8', pkcs8, params, false, ['sign']);
  const encodedHeader = Buffer.from(
    JSON.stringify({ alg: row.algorithm, typ: 'JWT', kid: row.kid }),
  ).toString('base64url');
  return {
    kid: row.kid,
    purpose: row.purpose,
    algorithm: row.algorithm,
    publicJwk,
    publicKey: createPublicKey({ key: publicJwk as never, format: 'jwk' }),
    async sign(claims) {
      const signingInput = `${encodedHeader}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
      // On the pool, not the event loop: `crypto.sign` there took the loop past a core at 1,500
      // RS256 verifies a second (p99 in the hundreds of ms). Worker threads of our own,
      // node:crypto's callback form and two cluster processes each measured no better than this.
      const signature = await webcrypto.subtle.sign(params, privateKey, Buffer.from(signingInput));
      return `${signingInput}.${Buffer.from(signature).toString('base64url')}`;
    },
    activatesAt: row.activates_at,
  };
}
