import { setImmediate as nextTurn } from 'node:timers/promises';
import { type PGlite, parse, protocol } from '@electric-sql/pglite';
import { classifyDriverError } from './errors.js';
import type { QueryObserver } from './executor.js';
import { namedStatement } from './prepared.js';

/**
 * Adapts one embedded PGlite instance to the small part of the `pg.Pool` interface that
 * Kysely's PostgresDialect uses (connect, query, release, end). Written here because the
 * published Kysely PGlite dialect does not support PGlite 0.5.
 *
 * PGlite is a single connection, so the pool hands it out to one holder at a time: a
 * transaction keeps it until release, and every other query waits its turn instead of
 * slipping into someone else's transaction.
 */
export class PGlitePool {
  private tail: Promise<void> = Promise.resolve();
  /** Statements prepared on this instance by name: their text and their parameters' types. */
  private readonly prepared = new Map<string, PreparedOnInstance>();

  constructor(
    private readonly pglite: PGlite,
    private readonly observeQuery?: QueryObserver,
  ) {}

  connect(): Promise<PGliteClient> {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const turn = this.tail.then(
      () => new PGliteClient(this.pglite, this.prepared, release, this.observeQuery),
    );
    this.tail = this.tail.then(() => released);
    return turn;
  }

  async end(): Promise<void> {
    await this.tail;
    await this.pglite.close();
  }
}

interface PreparedOnInstance {
  text: string;
  types: number[];
}

export class PGliteClient {
  private done = false;

  constructor(
    private readonly pglite: PGlite,
    private readonly prepared: Map<string, PreparedOnInstance>,
    private readonly onRelease: () => void,
    private readonly observeQuery?: QueryObserver,
  ) {}

  async query(sql: string, parameters: readonly unknown[] = []) {
    if (turnOverdue()) await nextTurn();
    // Timed from the statement's turn on the one connection, as pg times its own.
    const started = this.observeQuery ? performance.now() : 0;
    try {
      return await this.run(sql, parameters);
    } catch (error) {
      throw classifyDriverError(error);
    } finally {
      this.observeQuery?.((performance.now() - started) / 1000);
    }
  }

  private async run(sql: string, parameters: readonly unknown[]) {
    const named = namedStatement(sql, parameters);
    // A statement marked prepared runs by its name (below). Otherwise, like pg, a query without
    // parameters goes through the simple protocol, which accepts several statements (migration
    // files), and a parameterised one through the extended protocol, unnamed.
    const result = named
      ? await this.runNamed(named.name, sql, named.values)
      : parameters.length === 0
        ? (await this.pglite.exec(sql)).at(-1)
        : await this.pglite.query(sql, [...parameters]);
    return { rows: result?.rows ?? [], rowCount: result?.affectedRows ?? 0, command: commandOf(sql) };
  }

  /**
   * A statement marked prepared (prepared.ts) is parsed once per instance under its name, as pg
   * prepares it once per connection, and its plan is cached by PostgreSQL like any prepared
   * statement's. PGlite's own `query` parses, describes and plans every call, on this thread
   * (measured: the verification cache's refresh of 50 licenses 3.6 → 1.8 ms, the lookup of one
   * key 1.3 → 1.0 ms). Written here because PGlite's API has no named statements: it sends the
   * messages PGlite's `query` sends, through the serializer and result parser PGlite exports, in
   * one exchange each (a Sync ends it, so an error leaves the connection ready, as `query` does). A name is bound to its first text: a
   * second text under it is refused, as pg refuses it, rather than run as the first.
   */
  private async runNamed(name: string, text: string, parameters: readonly unknown[]) {
    const { serialize } = protocol;
    return this.pglite.runExclusive(async () => {
      const known = this.prepared.get(name);
      if (known && known.text !== text)
        throw new Error(`prepared statement ${name} was prepared with another text`);
      let types = known?.types;
      if (!types) {
        const described = await this.pglite.execProtocolStream(
          Buffer.concat([
            serialize.parse({ name, text }),
            serialize.describe({ type: 'S', name }),
            serialize.sync(),
          ]),
          { syncToFs: false },
        );
        types = parse.parseDescribeStatementResults(described);
        this.prepared.set(name, { text, types });
      }
      const values = parameters.map((value, i) => {
        if (value === null || value === undefined) return null;
        const serializer = this.pglite.serializers[types[i] as number];
        return serializer ? serializer(value) : String(value);
      });
      const messages = await this.pglite.execProtocolStream(
        Buffer.concat([
          serialize.bind({ statement: name, values }),
          serialize.describe({ type: 'P' }),
          serialize.execute({}),
          serialize.sync(),
        ]),
        { syncToFs: false },
      );
      await this.pglite.syncToFs();
      return parse.parseResults(messages, this.pglite.parsers)[0];
    });
  }

  release(): void {
    if (this.done) return;
    this.done = true;
    this.onRelease();
  }
}

/**
 * How long statements may follow one another without the event loop taking a turn. PGlite runs
 * each statement on this thread, and a statement's answer resumes its caller in a microtask, so
 * work that issues statements one after another (the verification cache's refresh, a webhook
 * pass, a job) would otherwise hold the loop for all of them: requests that arrived meanwhile
 * wait, though they need no database (their answer is in memory). Past this budget the next
 * statement waits for the loop's check phase, after the pending I/O has been served.
 */
const TURN_BUDGET_MS = 2;
/** When the current run of statements without a turn of the loop began (null: none running). */
let runStartedAt: number | null = null;

function turnOverdue(): boolean {
  const now = performance.now();
  if (runStartedAt === null) {
    runStartedAt = now;
    // Runs at the loop's next check phase: whatever follows is a new run.
    setImmediate(endRun);
    return false;
  }
  return now - runStartedAt > TURN_BUDGET_MS;
}

function endRun(): void {
  runStartedAt = null;
}

function commandOf(sql: string): string {
  return /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? '';
}
