// Temporary A/B (not committed): this build against another build's dist/cli.js, same machine, same run.
import path from 'node:path';
import { alternate, load, median, samplesTable } from './lib.js';
import { SERVICE_ENV, start } from './processes.js';
import { openStorage, seedLicenses, writeBodies } from './storage.js';

const OTHER = process.argv[2] as string;
const kind = 'PostgreSQL' as const;
async function service(entry: string, storage: { env: Record<string, string>; dir: string }, env: Record<string, string>, label: string) {
  const node = await start(entry, ['serve'], { ...SERVICE_ENV, ...storage.env, ...env }, /"coreUrl":"([^"]+)"/, path.join(storage.dir, `${label}.log`));
  return { ...node, api: `${node.ready[1]}/v1` };
}
const stores = await Promise.all(['a-off', 'b-off', 'a-tok', 'b-tok'].map((l) => openStorage(kind, l)));
for (const s of stores) await s.write((db) => seedLicenses(db, 10_000));
const bodies = writeBodies(stores[0]!, 'bodies.jsonl', 10_000);
const aOff = await service('dist/cli.js', stores[0]!, { LICENSE_TOKENS: 'off' }, 'a');
const bOff = await service(OTHER, stores[1]!, { LICENSE_TOKENS: 'off' }, 'b');
const aTok = await service('dist/cli.js', stores[2]!, {}, 'a');
const bTok = await service(OTHER, stores[3]!, {}, 'b');
const run = (api: string) => async (seconds: number) => load(`${api}/licenses/verify`, { bodies, seconds });
const samples = await alternate([
  { name: 'A verify, tokens off (this build)', run: run(aOff.api) },
  { name: 'B verify, tokens off (other build)', run: run(bOff.api) },
  { name: 'A verify with a token (this build)', run: run(aTok.api) },
  { name: 'B verify with a token (other build)', run: run(bTok.api) },
]);
console.log(samplesTable(samples));
const m = (n: string) => median((samples.get(n) ?? []).map((s) => s.perSecond));
console.log('off A/B', (m('A verify, tokens off (this build)') / m('B verify, tokens off (other build)')).toFixed(3));
console.log('tok A/B', (m('A verify with a token (this build)') / m('B verify with a token (other build)')).toFixed(3));
for (const n of [aOff, bOff, aTok, bTok]) await n.stop();
for (const s of stores) await s.drop();
process.exit(0);
