import { setTimeout as sleep } from 'node:timers/promises';
import type { HttpClient } from './http-client.js';

/**
 * Buyers' software starting free trials of one product (the checkout host's JSON route) while the
 * service is being hurt, and what the answers oblige it to keep. As with seats, only answered
 * calls count: a start that got no answer may or may not have issued a trial.
 */

export interface TrialStart {
  email: string;
  /** The device of a trial on a device; absent for a trial by e-mail. */
  hwuid?: string;
  /** The earlier start whose address (a trial by e-mail's) or device this one uses again. */
  repeatOf?: TrialStart;
  /** The HTTP status, when an answer came. */
  status?: number;
  code?: string;
  trialId?: string;
  /** In the answer only for a trial on a device; a trial by e-mail's key is mailed. */
  licenseKey?: string | null;
}

export function trialLedger() {
  const starts: TrialStart[] = [];
  return {
    starts,

    /** The starts answered 201, and answers no correct service could give. */
    expectations() {
      const acknowledged = starts.filter((start) => start.status === 201 && start.trialId);
      const violations: string[] = [];
      for (const start of starts) {
        if (start.status === undefined || start.status === 503) continue;
        const what = `${start.email} on ${start.hwuid ?? 'no device'}`;
        if (start.status !== 201 && !(start.status === 409 && start.code === 'trial_already_used'))
          violations.push(`${what}: answered ${start.status} ${start.code ?? ''}`);
        // A fresh address or device always gets its trial.
        else if (!start.repeatOf && start.status !== 201)
          violations.push(`${what}: a fresh start was refused`);
        // Once a trial was acknowledged, its device, or a trial by e-mail's address, never gets another.
        else if (start.repeatOf?.status === 201 && start.status === 201)
          violations.push(`${what}: a second trial after ${start.repeatOf.email} on ${start.repeatOf.hwuid}`);
        // Only a trial on a device answers its key.
        else if (
          start.status === 201 &&
          (typeof start.licenseKey === 'string') !== (start.hwuid !== undefined)
        )
          violations.push(`${what}: answered the key ${start.licenseKey}`);
      }
      return { acknowledged, violations };
    },
  };
}

/**
 * One lane of trial starts, on devices and by e-mail in turn, each with a fresh address; every
 * third start reuses what an earlier one claimed (its device, or a trial by e-mail's address, by
 * e-mail or on a fresh device), until `alive()` is false or a call gets no answer (the process is
 * gone). A 503 is recorded and the lane goes on.
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
    const email = `trial-${options.name}-${i}@example.com`;
    const hwuid = i % 2 === 0 ? `trial-pc-${options.name}-${i}` : undefined;
    const earlier =
      i % 3 === 2 && starts.length ? starts[Math.floor(Math.random() * starts.length)] : undefined;
    const start: TrialStart = !earlier
      ? { email, hwuid }
      : earlier.hwuid !== undefined
        ? { email, hwuid: earlier.hwuid, repeatOf: earlier }
        : { email: earlier.email, hwuid, repeatOf: earlier };
    starts.push(start);
    try {
      const res = await options.pay.post('/api/checkout/trials', {
        productId: options.productId,
        email: start.email,
        ...(start.hwuid !== undefined ? { hwuid: start.hwuid } : {}),
      });
      start.status = res.status;
      start.code = res.body?.error?.code;
      start.trialId = res.body?.trialId;
      start.licenseKey = res.body?.licenseKey;
    } catch {
      return;
    }
    if (options.pauseMs) await sleep(options.pauseMs);
  }
}
