import { claimsOf } from './tampering.js';

/**
 * What the families of cases share: the SDKs' tolerances the verdicts are written with (seconds),
 * an app id that is not the issuer's, and a signed input's times.
 */

export const TOKEN_LEEWAY = 30;
export const FILE_LEEWAY = 300;
export const WEBHOOK_LEEWAY = 300;
export const OTHER_APP = '00000000-0000-4000-8000-000000000000';

/** A clock guard's state is kept in milliseconds, as the SDKs store it. */
export const ms = (seconds: number) => seconds * 1000;

export const timesOf = (jws: string) =>
  claimsOf(jws) as { iat: number; nbf: number; exp: number; sub: string };
