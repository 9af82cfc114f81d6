import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, test } from 'node:test';
import { setImmediate as turn } from 'node:timers/promises';
import { decodeProtectedHeader } from 'jose';
import type { KyselyPlugin } from 'kysely';
import { resolveSigningKeyEncryptionKeys } from '../../app/server-secret.js';
import { classifyDriverError } from '../../platform/db/errors.js';
import { createLog } from '../../platform/log.js';
import { startTestServer, type TestServer } from '../../testing/harness.js';
import { testClock } from '../../testing/test-clock.js';
import { ACTIVATION_DELAY_MS, createKeyRing, KEY_CACHE_MS } from './key-ring.js';
import { createKeySealer } from './key-sealing.js';
import type { LicenseTokenSubject } from './token-signer.js';
import { createTokenSigner } from './token-signer.js';

/**
 * The signing keys through a database outage: verify answers licenses it holds from memory then,
 * and its tokens are signed with the keys last read, never to outlive their publication.
 */
let server: TestServer;
before(async () => {
  server = await startTestServer({}, { ownDatabase: true });
});
after(() => server.stop());

/** The server's database, whose statements fail as a database gone away does while `failure` is set. */
function failingDb() {
  const state = { failure: null as Error | null, reads: 0 };
  const plugin: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      state.reads++;
      if (state.failure) throw state.failure;
      return args.result;
    },
  };
  return { db: server.db.withPlugin(plugin), state };
}

/** The server's key-encryption keys: this ring reads the keys the server stored. */
const sealer = () => createKeySealer(resolveSigningKeyEncryptionKeys(server.config));

const unreachable = () =>
  classifyDriverError(
    Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }),
  ) as Error;

const DAY_MS = 24 * 60 * 60_000;
/** key-ring.ts's CLOCK_LEEWAY_MS: how long after a day a retired key stays published. */
const LEEWAY_MS = 5 * 60_000;

const subject: LicenseTokenSubject = {
  licenseId: randomUUID(),
  appId: randomUUID(),
  algorithm: 'RS256',
  status: 'ACTIVE',
  hwBound: false,
  // The longest-lived tokens (a day), which a key kept through a long outage could outlive.
  sellerTier: 'enterprise',
  licenseExpiresAt: null,
};

test('keeps signing with the keys it read while the database is away, and reads them again once it is back', async () => {
  const { db, state } = failingDb();
  // On a whole second, as token times are.
  const clock = testClock(new Date(Math.floor(Date.now() / 1000) * 1000));
  const readAt = clock.now().getTime();
  const keys = createKeyRing({ db, clock, log: createLog(server.config), sealer: sealer() });
  const signer = createTokenSigner({ keys, clock, issuer: 'https://issuer.example' });
  const kidOf = (issued: { token: string } | null) => decodeProtectedHeader(issued?.token ?? '').kid;
  const lifetimeOf = (issued: { expiresAt: Date } | null) =>
    (issued?.expiresAt.getTime() ?? 0) - Math.floor(clock.now().getTime() / 1000) * 1000;

  const before = await signer.issue(subject);
  const kid = kidOf(before);
  assert.ok(kid);

  clock.advance(KEY_CACHE_MS);
  state.failure = unreachable();
  state.reads = 0;
  const during = await signer.issue(subject);
  assert.deepEqual([kidOf(during), lifetimeOf(during)], [kid, DAY_MS], 'signed with the keys held');
  assert.equal((await signer.check(during?.token ?? '')).ok, true);
  await signer.issue(subject);
  assert.equal(state.reads, 1, 'asked again at most once a second, with nobody waiting');

  // Far into the outage: a token ends while every key this node knew is surely still published.
  clock.advance(20 * 60 * 60_000);
  const late = await signer.issue(subject);
  assert.equal(kidOf(late), kid);
  assert.equal(late?.expiresAt.getTime(), readAt + ACTIVATION_DELAY_MS + DAY_MS + LEEWAY_MS);

  state.failure = null;
  clock.advance(1_000);
  await signer.issue(subject);
  for (let turns = 0; keys.tokensEndBy() !== Number.POSITIVE_INFINITY; turns++) {
    assert.ok(turns < 10_000, 'the keys are read again');
    await turn();
  }
  assert.equal(lifetimeOf(await signer.issue(subject)), DAY_MS, 'back: tokens live their full time');
});

test('a read that fails for another reason than the database being away is not hidden', async () => {
  const { db, state } = failingDb();
  const clock = testClock(new Date());
  const keys = createKeyRing({ db, clock, log: createLog(server.config), sealer: sealer() });
  assert.ok(await keys.signingKey());
  clock.advance(KEY_CACHE_MS);
  state.failure = new Error('not the database being away');
  await assert.rejects(keys.signingKey(), /not the database being away/);
});

test('lists each key with its state through a rotation: pending, then signing while the one it replaced verifies, then that one retired', async () => {
  // Last in this file: the rotation stays in the server's database (at the real time, so the
  // tests above, on real clocks, still find the keys they read signing).
  const clock = testClock(new Date());
  const keys = createKeyRing({ db: server.db, clock, log: createLog(server.config), sealer: sealer() });
  const stateOf = async () =>
    new Map((await keys.list()).map((key) => [key.kid, [key.purpose, key.algorithm, key.state].join(' ')]));
  const first = await keys.list();
  assert.deepEqual(first.map((key) => `${key.purpose} ${key.algorithm} ${key.state}`).sort(), [
    'offline EdDSA signing',
    'offline RS256 signing',
    'token EdDSA signing',
    'token RS256 signing',
  ]);
  for (const key of first) {
    assert.deepEqual(Object.keys(key).sort(), [
      'activatesAt',
      'algorithm',
      'kid',
      'publishedAt',
      'purpose',
      'state',
      'unpublishAt',
    ]);
  }
  const old = Object.fromEntries(
    first.filter((key) => key.purpose === 'token').map((key) => [key.algorithm, key.kid]),
  ) as Record<'RS256' | 'EdDSA', string>;

  const { kids } = await keys.rotate('token');
  let states = await stateOf();
  for (const algorithm of ['RS256', 'EdDSA'] as const) {
    assert.equal(states.get(kids[algorithm]), `token ${algorithm} pending`);
    assert.equal(states.get(old[algorithm]), `token ${algorithm} signing`);
    assert.equal(
      (await keys.signingKey('token', algorithm))?.kid,
      old[algorithm],
      'the ring signs as listed',
    );
  }

  clock.advance(ACTIVATION_DELAY_MS);
  states = await stateOf();
  for (const algorithm of ['RS256', 'EdDSA'] as const) {
    assert.equal(states.get(kids[algorithm]), `token ${algorithm} signing`);
    assert.equal(states.get(old[algorithm]), `token ${algorithm} verifying`);
    assert.equal(
      (await keys.signingKey('token', algorithm))?.kid,
      kids[algorithm],
      'the ring signs as listed',
    );
  }

  clock.advance(DAY_MS + LEEWAY_MS + 1_000);
  states = await stateOf();
  for (const algorithm of ['RS256', 'EdDSA'] as const) {
    assert.equal(states.get(kids[algorithm]), `token ${algorithm} signing`);
    assert.equal(states.get(old[algorithm]), `token ${algorithm} retired`);
    assert.equal(
      (await keys.jwks()).keys.some((key) => key.kid === old[algorithm]),
      false,
      'a retired key has left the key set',
    );
  }
  assert.deepEqual(
    [...states.values()].filter((state) => state.startsWith('offline')).sort(),
    ['offline EdDSA signing', 'offline RS256 signing'],
    'the offline keys are left as they were',
  );
});
