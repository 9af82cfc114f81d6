import { alternate, CONNECTIONS, type Figure, load, ratioOf, samplesTable } from './lib.js';
import { startService } from './processes.js';
import { openStorage, type StorageKind, seedLicenses, writeBodies } from './storage.js';

const SMALL = 10_000;
/** The large platform (BENCH_LARGE, default 1,000,000 licenses). */
const LARGE = Math.max(SMALL, Number(process.env.BENCH_LARGE ?? 1_000_000));

/**
 * P5: verify with a token on a platform of LARGE licenses against one of 10,000, each service
 * in its own process over its own database, alternating. Both are asked for 10,000 distinct
 * licenses round-robin, spread evenly over the whole table (every LARGE/10,000th license).
 */
export async function verifyAtScale(kind: StorageKind): Promise<{ text: string; figures: Figure[] }> {
  const small = await openStorage(kind, 'scale-small');
  const large = await openStorage(kind, 'scale-large');
  const stops: (() => Promise<void>)[] = [];
  try {
    await small.write((db) => seedLicenses(db, SMALL));
    const started = performance.now();
    await large.write((db) => seedLicenses(db, LARGE));
    const seedSeconds = Math.round((performance.now() - started) / 1000);
    const smallBodies = writeBodies(small, 'bodies.jsonl', SMALL);
    const largeBodies = writeBodies(large, 'bodies.jsonl', SMALL, Math.max(1, Math.floor(LARGE / SMALL)));

    const smallNode = await startService(small, {});
    stops.push(smallNode.stop);
    const largeNode = await startService(large, {});
    stops.push(largeNode.stop);
    const largeName = `verify with a token, ${LARGE.toLocaleString('en')} licenses`;
    const smallName = `verify with a token, ${SMALL.toLocaleString('en')} licenses (baseline)`;
    const samples = await alternate([
      {
        name: largeName,
        run: (seconds) => load(`${largeNode.api}/licenses/verify`, { bodies: largeBodies, seconds }),
      },
      {
        name: smallName,
        run: (seconds) => load(`${smallNode.api}/licenses/verify`, { bodies: smallBodies, seconds }),
      },
    ]);
    const text = [
      `#### Verify at scale (${kind})`,
      '',
      `${CONNECTIONS} connections, 10,000 distinct licenses round-robin on both; seeding ${LARGE.toLocaleString('en')} licenses with their devices (SQL, then VACUUM ANALYZE) took ${seedSeconds} s.`,
      '',
      samplesTable(samples),
    ].join('\n');
    return {
      text,
      figures: [
        {
          figure: 'P5',
          measure: `verify at ${LARGE.toLocaleString('en')} / at ${SMALL.toLocaleString('en')} licenses`,
          value: ratioOf(samples, largeName, smallName),
          goal: '≥ 90 %',
        },
      ],
    };
  } finally {
    for (const stop of stops.reverse()) await stop();
    await small.drop();
    await large.drop();
  }
}
