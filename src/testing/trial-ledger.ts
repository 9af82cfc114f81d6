import { setTimeout as sleep } from 'node:timers/promises';
import type { HttpClient } from './http-client.js';

/**
 * Buyers' software starting free trials of one product (the checkout host's JSON route) while the
 * service is being hurt, and what the answers oblige it to keep. As with seats, only answered
 * calls count: a start that got no answer may or may not have issued a trial.
 */

export interface TrialStart {
  email: string;
  hwuid: string;
  /** The earlier start whose e-mail or device this one uses again; absent for a fresh pair. */
  repeatOf?: TrialStart;
  /** The HTTP status, when an answer came. */
  status?: number;
  code?: string;
  licenseKey?: string;
}

export function trialLedger() {
  const starts: TrialStart[] = [];
  return {
    starts,

    /** The starts answered 201, and answers no correct service could give. */
    expectations() {
      const acknowledged = starts.filter((start) => start.status === 201 && start.licenseKey);
      const violations: string[] = [];
      for (const start of starts) {
        if (start.status === undefined || start.status === 503) continue;
        const what = `${start.email} on ${start.hwuid}`;
        if (start.status !== 201 && !(start.status === 409 && start.code === 'trial_already_used'))
          violations.push(`${what}: answered ${start.status} ${start.code ?? ''}`);
        // A fresh e-mail on a fresh device always gets its trial.
        else if (!start.repeatOf && start.status !== 201)
          violations.push(`${what}: a fresh start was refused`);
        // Once a trial was acknowledged, its e-mail and its device never get another.
        else if (start.repeatOf?.status === 201 && start.status === 201)
          violations.push(`${what}: a second trial for ${start.repeatOf.email} on ${start.repeatOf.hwuid}`);
      }
      return { acknowledged, violations };
    },
  };
}

/**
 * One lane of trial starts: fresh e-mails on fresh devices, and every third start an earlier
 * start's e-mail (or device) again with the other part fresh, until `alive()` is false or a call
 * gets no answer (the process is gone). A 503 is recorded and the lane goes on.
 */
export async function trialLane(options: {
  pay: HttpClient;
  productId: string;
  /** Names this lane's e-mails and devices apart from every other lane's and cycle's. */
  name: string;
  ledger: ReturnType<typeof trialLedger>;
  alive: () => boolean;
  pauseMs?: number;
}): Promise<void> {
  const { starts } = options.ledger;
  for (let i = 0; options.alive(); i++) {
    const fresh = { email: `trial-${options.name}-${i}@example.com`, hwuid: `trial-pc-${options.name}-${i}` };
    const earlier =
      i % 3 === 2 && starts.length ? starts[Math.floor(Math.random() * starts.length)] : undefined;
    const start: TrialStart = earlier
      ? i % 2 === 0
        ? { email: earlier.email, hwuid: fresh.hwuid, repeatOf: earlier }
        : { email: fresh.email, hwuid: earlier.hwuid, repeatOf: earlier }
      : fresh;
    starts.push(start);
    try {
      const res = await options.pay.post('/api/checkout/trials', {
        productId: options.productId,
        email: start.email,
        hwuid: start.hwuid,
      });
      start.status = res.status;
      start.code = res.body?.error?.code;
      start.licenseKey = res.body?.licenseKey;
    } catch {
      return;
    }
    if (options.pauseMs) await sleep(options.pauseMs);
  }
}
