import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { alternate, type Figure, load, ratioOf, samplesTable } from './lib.js';
import { startBaseline, startService } from './processes.js';
import { benchDevice, benchKey, openStorage, type StorageKind, seedLicenses } from './storage.js';

/** Licenses seeded, and rotated over round-robin by the load generator (BENCH_LICENSES, ≥ 2,000). */
const LICENSES = Math.max(2000, Number(process.env.BENCH_LICENSES ?? 10_000));
const UPDATE = 'one indexed UPDATE through pg (baseline of W1/W2)';
const HEARTBEAT = 'seat heartbeat (POST /licenses/checkout)';
const CONSUME = 'usage consume (POST /licenses/usage)';

/**
 * W1–W2: the two client routes that write on every call, in the service's own process, beside a
 * bare route making one indexed UPDATE through `pg` (what a write costs at the least), alternating
 * round by round. W1: a seat heartbeat, each request renewing the seat its license's device holds
 * (floating licenses of one seat, taken once before). W2: a usage consume of 1, each request on the
 * next license (quota never reached). Tokens off, so the rows measure the write path, not signing.
 * PostgreSQL only: the baseline is a `pg` client, and PGlite has no second connection to give it.
 */
export async function writePaths(kind: StorageKind): Promise<{ text: string; figures: Figure[] }> {
  if (kind !== 'PostgreSQL') return { text: '', figures: [] };
  const seats = await openStorage(kind, 'writes-seats');
  const usage = await openStorage(kind, 'writes-usage');
  const stops: (() => Promise<void>)[] = [];
  try {
    await seats.write(async (db) => {
      await seedLicenses(db, LICENSES);
      await sql`update licenses set floating = true, max_seats = 1, lease_seconds = 600`.execute(db);
      await sql`delete from license_devices`.execute(db);
    });
    await usage.write(async (db) => {
      await seedLicenses(db, LICENSES);
      await sql`update licenses set max_uses = 1000000000`.execute(db);
    });
    const bodies = (storage: { dir: string }, name: string, extra: Record<string, unknown>) => {
      const file = path.join(storage.dir, name);
      const lines = Array.from({ length: LICENSES }, (_, k) =>
        JSON.stringify({ key: benchKey(k + 1), hwuid: benchDevice(k + 1), ...extra }),
      );
      fs.writeFileSync(file, `${lines.join('\n')}\n`);
      return file;
    };
    const seatBodies = bodies(seats, 'seats.jsonl', {});
    const useBodies = bodies(usage, 'uses.jsonl', { amount: 1 });

    const seatService = await startService(seats, { LICENSE_TOKENS: 'off' });
    stops.push(seatService.stop);
    const usageService = await startService(usage, { LICENSE_TOKENS: 'off' });
    stops.push(usageService.stop);
    const update = await startBaseline(
      'update',
      { DATABASE_URL: usage.env.DATABASE_URL as string },
      usage.dir,
    );
    stops.push(update.stop);
    // Every device takes its seat once; the load then renews them, as heartbeats do.
    const taken = await load(`${seatService.api}/licenses/checkout`, { bodies: seatBodies, seconds: 3 });
    if (taken.errors) throw new Error(`seats not taken: ${taken.errors} errors`);

    const samples = await alternate([
      {
        name: HEARTBEAT,
        run: (seconds: number) =>
          load(`${seatService.api}/licenses/checkout`, { bodies: seatBodies, seconds }),
      },
      {
        name: CONSUME,
        run: (seconds: number) => load(`${usageService.api}/licenses/usage`, { bodies: useBodies, seconds }),
      },
      { name: UPDATE, run: (seconds: number) => load(update.url, { bodies: useBodies, seconds }) },
    ]);
    const figures: Figure[] = [
      {
        figure: 'W1',
        measure: 'seat heartbeat / one indexed UPDATE',
        value: ratioOf(samples, HEARTBEAT, UPDATE),
        goal: '',
      },
      {
        figure: 'W2',
        measure: 'usage consume / one indexed UPDATE',
        value: ratioOf(samples, CONSUME, UPDATE),
        goal: '',
      },
    ];
    const text = [
      `#### Writes on every call (${kind}): W1, W2`,
      '',
      `${LICENSES} licenses, round-robin; tokens off; the baseline adds 1 to a license's count by its key.`,
      '',
      samplesTable(samples),
    ].join('\n');
    return { text, figures };
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => {});
    await seats.drop();
    await usage.drop();
  }
}
