import type { Bindings, ChildLoggerOptions, Level, LevelWithSilentOrString, LogFn } from 'pino';
import type { Log } from '../log.js';

/**
 * `request.log` for Fastify's `childLoggerFactory`: the pino child carrying the request id is
 * made on the first line the request actually logs, not for every request. Most requests log
 * nothing at production's level (a successful verify's completion line is at debug), and making
 * a child cost more than anything else the logger does per request: pino runs the child's
 * bindings through the redaction of every wildcard path of the log's redact list (measured:
 * 2.2 KB allocated and 1.6 % of the main thread per verify). Our own because pino has no lazy
 * child and Fastify makes one per request.
 *
 * A route with a log level of its own gets a real child at once (its level differs from the
 * parent's, which the checks below assume).
 */
export function requestLog(parent: Log, bindings: Bindings, options: ChildLoggerOptions): Log {
  if (options.level !== undefined) return parent.child(bindings, options);
  return new LazyChild(parent, bindings, options) as unknown as Log;
}

class LazyChild {
  #parent: Log;
  #bindings: Bindings;
  #options: ChildLoggerOptions;
  #child: Log | null = null;

  constructor(parent: Log, bindings: Bindings, options: ChildLoggerOptions) {
    this.#parent = parent;
    this.#bindings = bindings;
    this.#options = options;
  }

  #real(): Log {
    this.#child ??= this.#parent.child(this.#bindings, this.#options);
    return this.#child;
  }

  /** A line at `level` makes the child only when the level is on. */
  #line(level: Level, args: Parameters<LogFn>): void {
    if (this.#child !== null || this.#parent.isLevelEnabled(level)) this.#real()[level](...args);
  }

  fatal(...args: Parameters<LogFn>): void {
    this.#line('fatal', args);
  }
  error(...args: Parameters<LogFn>): void {
    this.#line('error', args);
  }
  warn(...args: Parameters<LogFn>): void {
    this.#line('warn', args);
  }
  info(...args: Parameters<LogFn>): void {
    this.#line('info', args);
  }
  debug(...args: Parameters<LogFn>): void {
    this.#line('debug', args);
  }
  trace(...args: Parameters<LogFn>): void {
    this.#line('trace', args);
  }
  silent(): void {}

  get level(): LevelWithSilentOrString {
    return (this.#child ?? this.#parent).level;
  }

  set level(level: LevelWithSilentOrString) {
    this.#real().level = level;
  }

  isLevelEnabled(level: LevelWithSilentOrString): boolean {
    return (this.#child ?? this.#parent).isLevelEnabled(level);
  }

  child(bindings: Bindings, options?: ChildLoggerOptions): Log {
    return this.#real().child(bindings, options);
  }

  bindings(): Bindings {
    return this.#real().bindings();
  }
}
