import { readlink } from 'node:fs/promises';
import os from 'node:os';
import type { Log } from './log.js';

/** Each round queues this many tasks per thread, so every idle thread wakes and takes some. */
const TASKS_PER_THREAD = 4;
const MAX_ROUNDS = 50;

/**
 * Lowers the scheduling priority (raises the nice value) of libuv's thread pool, where a node
 * signs its license tokens (WebCrypto), hashes passwords and does file I/O. On two busy cores a
 * signature woken on the pool would otherwise take the core from the event loop, which reads
 * requests and writes answers; at a lower priority it waits for a free moment instead, and the
 * slowest verifies come sooner, at the same maximum rate (measured on two cores at 1,500 verifies
 * a second: median p99 of 14 alternating pairs 36 → 25 ms). Only the pool: V8's helper threads
 * lowered too made each scavenge wait for them, and p99 worse; nice 19 measured no better than 10.
 *
 * Our own because Node offers no handle on the pool's threads: each is found by having it
 * read the link `/proc/thread-self`, which names the thread that reads it, and lowered
 * with setpriority on its thread id, which on Linux applies to that thread alone. Elsewhere (no
 * `/proc/thread-self`) nothing changes.
 */
export async function lowerThreadPoolPriority(
  { nice, size }: { nice: number; size: number },
  log: Log,
): Promise<void> {
  if (nice === 0) return;
  const threads = new Set<number>();
  try {
    for (let round = 0; round < MAX_ROUNDS && threads.size < size; round++) {
      const links = await Promise.all(
        Array.from({ length: size * TASKS_PER_THREAD }, () => readlink('/proc/thread-self')),
      );
      for (const link of links) {
        const thread = Number(link.slice(link.lastIndexOf('/') + 1));
        if (thread !== process.pid) threads.add(thread);
      }
    }
  } catch {
    log.info('process.thread_pool.priority_unsupported');
    return;
  }
  let lowered = 0;
  for (const thread of threads) {
    try {
      // A process started at a lower priority still (a service manager's Nice=) is left so:
      // going back up needs a privilege the service should not have.
      if (os.getPriority(thread) >= nice) continue;
      os.setPriority(thread, nice);
      lowered++;
    } catch (err) {
      log.warn({ err: { message: (err as Error).message }, thread }, 'process.thread_pool.priority_failed');
    }
  }
  log.info({ nice, threads: lowered, poolSize: size }, 'process.thread_pool.priority_lowered');
}
