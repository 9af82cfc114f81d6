import { setTimeout as sleep } from 'node:timers/promises';
import type { HttpClient } from './http-client.js';

/**
 * Devices taking and giving back seats of one floating license while the service is being
 * hurt (killed, its database restarted), and what their answers oblige the service to keep.
 * Only answered calls count: a call that got no answer (or a 503) may or may not have happened,
 * so the device's state is unknown until its next answered call.
 */

export interface SeatCall {
  hwuid: string;
  kind: 'checkout' | 'checkin';
  /** The 200 answer's body; absent when the call got no answer or another status. */
  answer?: { valid?: boolean; code?: string; lease_expires_at?: string; released?: boolean };
}

export interface SeatExpectations {
  /** Devices whose last answered call left them holding a seat, with the lease they were told. */
  held: Map<string, string>;
  /** Devices whose last call was answered and left them without a seat. */
  free: Set<string>;
  /** Checkouts answered valid that took a seat the device surely did not hold (so an event was due). */
  acquisitions: { hwuid: string; leaseExpiresAt: string }[];
  /** Per device, checkins answered `released: true`. */
  releases: Map<string, number>;
  /** Answers no correct service could give (a seat released that was surely not held…). */
  violations: string[];
}

export function seatLedger() {
  /** In the order sent; one device is driven by one lane at a time, so per device this is its history. */
  const calls: SeatCall[] = [];

  return {
    calls,

    /** The state the answers so far say this device is in: true, false, or null when unknown. */
    holding(hwuid: string): boolean | null {
      return replay(calls.filter((call) => call.hwuid === hwuid)).known;
    },

    expectations(): SeatExpectations {
      const result: SeatExpectations = {
        held: new Map(),
        free: new Set(),
        acquisitions: [],
        releases: new Map(),
        violations: [],
      };
      const devices = new Set(calls.map((call) => call.hwuid));
      for (const hwuid of devices) {
        const history = calls.filter((call) => call.hwuid === hwuid);
        const { known, lease } = replay(history, result, hwuid);
        if (history.at(-1)?.answer === undefined) continue;
        if (known === true && lease) result.held.set(hwuid, lease);
        else if (known === false) result.free.add(hwuid);
      }
      return result;
    },
  };
}

function replay(history: SeatCall[], result?: SeatExpectations, hwuid = '') {
  // A fresh license: no device holds a seat before its first call.
  let known: boolean | null = false;
  let lease: string | undefined;
  for (const call of history) {
    const answer = call.answer;
    if (!answer) {
      known = null;
      continue;
    }
    if (call.kind === 'checkout') {
      if (answer.valid === true) {
        if (known === false && answer.lease_expires_at)
          result?.acquisitions.push({ hwuid, leaseExpiresAt: answer.lease_expires_at });
        known = true;
        lease = answer.lease_expires_at;
      } else {
        if (answer.code !== 'no_seat_available')
          result?.violations.push(`${hwuid}: checkout refused with ${answer.code}`);
        // A device holding a seat renews it; only one holding none is refused.
        if (known === true) result?.violations.push(`${hwuid}: refused while holding a seat`);
        known = false;
      }
    } else {
      if (answer.released === true) {
        if (known === false) result?.violations.push(`${hwuid}: released a seat it did not hold`);
        result?.releases.set(hwuid, (result.releases.get(hwuid) ?? 0) + 1);
      } else if (known === true) {
        result?.violations.push(`${hwuid}: checkin of a held seat answered ${answer.code}`);
      }
      known = false;
    }
  }
  return { known, lease };
}

/**
 * One device lane: checks out its devices in turn, and gives back or renews (a heartbeat) those
 * it knows it holds, until `alive()` is false or a call fails for want of a server. A 503 is
 * recorded as unanswered and the lane goes on.
 */
export async function seatLane(options: {
  api: HttpClient;
  key: string;
  appId: string;
  hwuids: string[];
  ledger: ReturnType<typeof seatLedger>;
  alive: () => boolean;
  pauseMs?: number;
  timeoutMs?: number;
  /** Stop at the first call that gets no answer (a killed process) instead of going on. */
  stopOnNetworkError?: boolean;
}): Promise<void> {
  for (let i = 0; options.alive(); i++) {
    const hwuid = options.hwuids[i % options.hwuids.length] as string;
    const holding = options.ledger.holding(hwuid) === true;
    const kind = holding && Math.random() < 0.6 ? 'checkin' : 'checkout';
    const call: SeatCall = { hwuid, kind };
    options.ledger.calls.push(call);
    try {
      const res = await options.api.post(
        `/licenses/${kind}`,
        { key: options.key, hwuid, appId: options.appId },
        options.timeoutMs ? { timeoutMs: options.timeoutMs } : {},
      );
      if (res.status === 200) call.answer = res.body;
    } catch {
      if (options.stopOnNetworkError ?? true) return;
    }
    if (options.pauseMs) await sleep(options.pauseMs);
  }
}
