import type { Principal } from '../../platform/http/principal.js';
import type { Actor } from './store.js';

/** The seller's session (their user id) or the API key (its id) a change was made through. */
export function actorOf(principal: Principal): Actor {
  return principal.credential.kind === 'api_key'
    ? { kind: 'api_key', id: principal.credential.apiKeyId }
    : { kind: 'seller', id: principal.userId };
}

export const BUYER: Actor = { kind: 'buyer', id: null };
export const BILLING: Actor = { kind: 'billing', id: null };
export const SYSTEM: Actor = { kind: 'system', id: null };
