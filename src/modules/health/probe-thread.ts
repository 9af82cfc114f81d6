import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { localOrigin } from '../../platform/http/local-origin.js';
import type { Log } from '../../platform/log.js';
import { fromRoot } from '../../platform/project-root.js';
import { ProbeState, type Readiness } from './probe-state.js';
import type { ProbeThreadData, ProbeThreadMessage } from './probe-thread-worker.js';

/**
 * Liveness and readiness on a listener of their own (HEALTH_HOST:HEALTH_PORT), served by a thread
 * of their own. The main thread accepts one connection per turn of its event loop, and in a burst
 * of connections a turn can take a second: a probe on the main listeners waits its turn in the
 * queue. The probe thread's loop is never busy, so a probe is answered at once, from what the
 * main thread writes to shared memory: a beat every BEAT_MS while its loop runs, and what its
 * readiness check (the same `ping` as the readiness routes) found, every READINESS_CHECK_MS.
 */
const BEAT_MS = 250;
const READINESS_CHECK_MS = 1_000;
/** A check the database has not answered within this long finds it unreachable (pg's connect timeout). */
const READINESS_CHECK_TIMEOUT_MS = 5_000;
/** A thread that ended by itself is started again after this long, on the same port. */
const RESTART_DELAY_MS = 1_000;

export interface ProbeThreadOptions {
  host: string;
  port: number;
  backlog: number;
  stallMs: number;
  /** The readiness routes' check: resolves when the database answers. */
  ping: () => Promise<void>;
}

export interface ProbeThread {
  /** The listener's origin (`http://127.0.0.1:9465`). */
  readonly url: string;
  /**
   * The main listeners accept connections: readiness answers what the database check finds from
   * now on (503 `not_ready`, "starting", until then), so no balancer sends a request before.
   */
  serving(): void;
  /** From now on both probes answer 503 `not_ready`, as the main listeners do once stopping. */
  stopping(): void;
  /** Stops the thread; its listener and connections close with it. */
  close(): Promise<void>;
}

/** Starts the thread; resolves once it listens and the first readiness check has been made. */
export async function startProbeThread(options: ProbeThreadOptions, log: Log): Promise<ProbeThread> {
  const state = new ProbeState();
  state.beat();
  // Unref'd, as the thread is: none of it keeps the process alive.
  const beats = setInterval(() => state.beat(), BEAT_MS).unref();
  let serving = false;
  let stopping = false;
  let closed = false;
  let checkTimer: NodeJS.Timeout | undefined;
  let restartTimer: NodeJS.Timeout | undefined;

  let found: Readiness = 'starting';
  let pending: Promise<string | null> | null = null;
  const check = async (): Promise<void> => {
    // A ping still unanswered is waited for, never doubled, so a hung database is asked once.
    pending ??= options
      .ping()
      .then(
        () => null,
        (err: Error) => err.message,
      )
      .finally(() => {
        pending = null;
      });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>((resolve) => {
      // A turn of the loop runs timers before it reads sockets: after a long turn, the answer
      // may be waiting already, so it is given one more turn to be read.
      const lateBy = () => setImmediate(resolve, 'the database did not answer in time');
      timer = setTimeout(lateBy, READINESS_CHECK_TIMEOUT_MS).unref();
    });
    const failure = await Promise.race([pending, late]).finally(() => clearTimeout(timer));
    if (stopping) return;
    const now: Readiness = failure === null ? 'ready' : 'database_unreachable';
    // Logged as it changes, not every second.
    if (now !== found && failure !== null)
      log.warn({ err: { message: failure } }, 'health.database.unreachable');
    if (now !== found && found === 'database_unreachable') log.info('health.database.reachable');
    found = now;
    if (serving) state.publish(now);
  };
  const checkLater = () => {
    checkTimer = setTimeout(() => {
      void check().finally(() => {
        if (!stopping) checkLater();
      });
    }, READINESS_CHECK_MS).unref();
  };

  const data: Omit<ProbeThreadData, 'port'> = {
    host: options.host,
    backlog: options.backlog,
    stallMs: options.stallMs,
    state: state.buffer,
  };
  let thread: { worker: Worker; port: number };
  // A thread that ends by itself (an uncaught error in it: logged, never the process's end) is
  // started again on the same port, until it listens or the service stops.
  const ended = (worker: Worker) => {
    if (closed || worker !== thread.worker) return;
    log.error({ port: thread.port }, 'health.listener.exited');
    restartLater();
  };
  const restartLater = () => {
    restartTimer = setTimeout(() => {
      startThread({ ...data, port: thread.port }, log, ended).then(
        (started) => {
          if (closed) void started.worker.terminate();
          else thread = started;
        },
        (err: Error) => {
          log.error({ err: { message: err.message } }, 'health.listener.restart_failed');
          if (!closed) restartLater();
        },
      );
    }, RESTART_DELAY_MS).unref();
  };
  try {
    [thread] = await Promise.all([startThread({ ...data, port: options.port }, log, ended), check()]);
  } catch (error) {
    clearInterval(beats);
    throw error;
  }
  checkLater();
  return {
    url: localOrigin({ address: data.host, port: thread.port }),
    serving() {
      serving = true;
      if (!stopping) state.publish(found);
    },
    stopping() {
      stopping = true;
      clearTimeout(checkTimer);
      state.publish('stopping');
    },
    async close() {
      closed = true;
      stopping = true;
      clearTimeout(checkTimer);
      clearTimeout(restartTimer);
      clearInterval(beats);
      await thread.worker.terminate();
    },
  };
}

/** One thread, resolved once it listens; `ended` is told if it ends afterwards. */
function startThread(
  data: ProbeThreadData,
  log: Log,
  ended: (worker: Worker) => void,
): Promise<{ worker: Worker; port: number }> {
  return new Promise((resolve, reject) => {
    const entry = workerEntry();
    const worker = new Worker(entry.filename, { eval: entry.eval, workerData: data });
    let listening = false;
    worker.on('message', (message: ProbeThreadMessage) => {
      if ('listening' in message) {
        listening = true;
        worker.unref();
        resolve({ worker, port: message.listening });
      } else if ('failed' in message) {
        reject(
          Object.assign(new Error(`health listener (HEALTH_PORT): ${message.failed}`), {
            code: message.code,
          }),
        );
        void worker.terminate();
      } else {
        log.warn({ err: { message: message.error } }, 'health.listener.error');
      }
    });
    worker.on('error', (err) => {
      if (listening) log.error({ err: { message: err.message } }, 'health.listener.failed');
      else reject(err);
    });
    worker.on('exit', (code) => {
      if (listening) ended(worker);
      else reject(new Error(`health listener: its thread ended (${code}) before listening`));
    });
  });
}

/**
 * The thread's file beside this one, as this one runs: compiled `.js` (dist, the suite's
 * mirror) or a `.ts` source through tsx. On Node.js 20 a thread gets none of the loader hooks
 * the main thread has, and tsx registers itself on the main thread only: from source the thread
 * registers tsx (resolved from here) before it loads the file.
 */
function workerEntry(): { filename: string | URL; eval: boolean } {
  const here = fileURLToPath(import.meta.url);
  const beside = path.join(path.dirname(here), `probe-thread-worker${path.extname(here)}`);
  // From dist/cli.bundle.js this module is no file of its own: the thread's file is in dist/.
  const file = pathToFileURL(
    fs.existsSync(beside) ? beside : fromRoot('dist', 'modules', 'health', 'probe-thread-worker.js'),
  );
  if (path.extname(here) !== '.ts') return { filename: file, eval: false };
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  return {
    filename: `import(${tsx}).then((tsx) => { tsx.register(); return import(${JSON.stringify(file.href)}); })`,
    eval: true,
  };
}
