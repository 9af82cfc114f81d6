/**
 * What the main thread tells the probe thread, in shared memory (no messages, so nothing waits
 * on the main thread's event loop): when that loop last ran, and what the node's readiness check
 * last found. Written by the main thread only, read by the probe thread.
 */
export type Readiness = 'starting' | 'ready' | 'database_unreachable' | 'stopping';

const READINESS: readonly Readiness[] = ['starting', 'ready', 'database_unreachable', 'stopping'];
const BEAT = 0;
const READY = 1;

export class ProbeState {
  private readonly slots: BigInt64Array;

  /** Over a new buffer (the main thread), or over the one the main thread handed over. */
  constructor(readonly buffer = new SharedArrayBuffer(2 * BigInt64Array.BYTES_PER_ELEMENT)) {
    this.slots = new BigInt64Array(buffer);
  }

  /** The main thread's event loop ran now. A monotonic clock, the same on every thread. */
  beat(): void {
    Atomics.store(this.slots, BEAT, process.hrtime.bigint());
  }

  /** Milliseconds since the last beat. */
  sinceBeatMs(): number {
    return Number(process.hrtime.bigint() - Atomics.load(this.slots, BEAT)) / 1e6;
  }

  publish(readiness: Readiness): void {
    Atomics.store(this.slots, READY, BigInt(READINESS.indexOf(readiness)));
  }

  readiness(): Readiness {
    return READINESS[Number(Atomics.load(this.slots, READY))] ?? 'starting';
  }
}
