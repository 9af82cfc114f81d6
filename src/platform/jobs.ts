import { isDatabaseUnavailable } from './db/errors.js';
import type { Log } from './log.js';

/**
 * Background work repeated on an interval in every node. A run never overlaps the previous
 * one, a failure is logged and retried on the next tick (a database outage pauses the job
 * until a pass succeeds), and stop() aborts the signal a run in progress was given and waits
 * for it: a run that works through a backlog stops between two pieces of it. Jobs must be
 * safe when several nodes run them at once.
 */
export interface Jobs {
  /**
   * Returns `wake`: run now rather than at the next tick. Wakes during a run collapse into one
   * run right after it, so a burst of them costs one extra pass.
   */
  every(name: string, intervalMs: number, run: (stopping: AbortSignal) => Promise<unknown>): () => void;
  stop(): Promise<void>;
}

/** Told each finished run of a job: its outcome and how long it took (the job metrics). */
export type JobRunObserver = (
  job: string,
  outcome: 'succeeded' | 'failed' | 'paused',
  seconds: number,
) => void;

export function createJobs(log: Log, observeRun: JobRunObserver = () => {}): Jobs {
  const timers: NodeJS.Timeout[] = [];
  const running = new Set<Promise<unknown>>();
  const stopping = new AbortController();
  return {
    every(name, intervalMs, run) {
      let busy = false;
      let again = false;
      // While the database is away every pass fails alike: say so once, and once when it is back.
      let paused = false;
      const tick = () => {
        if (busy || stopping.signal.aborted) return;
        busy = true;
        again = false;
        const started = performance.now();
        const seconds = () => (performance.now() - started) / 1000;
        const current = run(stopping.signal)
          .then(() => {
            observeRun(name, 'succeeded', seconds());
            if (paused) log.info({ job: name }, 'job.resumed');
            paused = false;
          })
          .catch((err) => {
            const unavailable = isDatabaseUnavailable(err);
            observeRun(name, unavailable ? 'paused' : 'failed', seconds());
            if (!unavailable) return log.error({ err, job: name }, 'job.failed');
            if (!paused) log.warn({ job: name, err: { message: err.message } }, 'job.paused');
            paused = true;
          })
          .finally(() => {
            busy = false;
            running.delete(current);
            if (again) setImmediate(tick);
          });
        running.add(current);
      };
      timers.push(setInterval(tick, intervalMs).unref());
      setImmediate(tick);
      return () => {
        if (busy) again = true;
        else setImmediate(tick);
      };
    },
    async stop() {
      stopping.abort();
      for (const timer of timers) clearInterval(timer);
      await Promise.all(running);
    },
  };
}
