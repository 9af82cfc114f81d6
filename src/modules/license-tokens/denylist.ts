import type { Clock } from '../../platform/clock.js';
import type { Db } from '../../platform/db/database.js';
import * as store from './store.js';
import { MAX_TOKEN_LIFETIME_SECONDS } from './token-lifetime.js';
import { CLOCK_TOLERANCE_SECONDS } from './token-signer.js';

export type TokenDenylist = ReturnType<typeof createTokenDenylist>;

/**
 * Revoked license tokens, by jti. An entry lives as long as the token could still be accepted
 * (its expiry plus the clock tolerance), never longer than a token can live: a forged jti
 * claiming a far expiry is refused rather than kept for decades.
 */
export function createTokenDenylist({ db, clock }: { db: Db; clock: Clock }) {
  return {
    /** False when the expiry is not one a token issued now could have. */
    async deny(jti: string, licenseId: string, expiresAt: Date): Promise<boolean> {
      const now = clock.now();
      const latest = now.getTime() + (MAX_TOKEN_LIFETIME_SECONDS + CLOCK_TOLERANCE_SECONDS) * 1000;
      if (expiresAt.getTime() > latest) return false;
      await store.denyToken(db, jti, licenseId, expiresAt, now);
      return true;
    },
    isDenied: (jti: string) => store.isTokenDenied(db, jti),
    purge: () => store.purgeDeniedTokens(db, clock.now(), CLOCK_TOLERANCE_SECONDS),
  };
}
