import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { IN_MEMORY_DATA_DIR } from '../platform/config.js';
import { openDatabase } from '../platform/db/database.js';
import { templateKey } from '../platform/db/database-template.js';
import { migrate } from '../platform/db/migrate.js';
import { createLog } from '../platform/log.js';

const FOLDER = path.join(os.tmpdir(), 'licensing-test-images');

let image: Promise<Blob> | null = null;
let imageFile: Promise<string> | null = null;

/**
 * An in-memory PGlite with every migration applied, as an image its test servers start from.
 * A new in-memory cluster costs an initdb and every migration (about 2 s of CPU here); one from
 * the image about a fifth of that, over a suite that starts some hundred servers. The service
 * still runs its migrations at each start, and finds them applied.
 *
 * The image is built once per machine and kept in the temporary folder, under a name taken from
 * the migrations and PGlite's version, so a changed migration or PGlite builds a new one. Test
 * files run as parallel processes: each writes under its own name and renames, so a reader
 * never sees half an image.
 */
export function migratedMemoryImage(): Promise<Blob> {
  image ??= migratedImage().then((file) => new Blob([fs.readFileSync(file)]));
  return image;
}

/**
 * Fills an empty data folder with the migrated image, as the embedded database of a service
 * process the test starts (`DATA_DIR`). An empty folder costs the process an initdb on disk and
 * every migration, about 10 s of CPU here against 0.3 s for the copy; the tests of a newcomer's
 * first start keep an empty one. The image is a tar of the cluster's folder (PGlite's
 * `dumpDataDir`), unpacked with the system's tar: PGlite unpacks it only into a new in-memory
 * cluster, and a Node.js tar package would be a dependency for this alone.
 */
export async function fillWithMigratedDatabase(dataDir: string): Promise<void> {
  const target = path.join(dataDir, 'pgdata');
  fs.mkdirSync(target, { recursive: true });
  await promisify(execFile)('tar', ['-xf', await migratedImage(), '-C', target]);
}

function migratedImage(): Promise<string> {
  imageFile ??= build();
  return imageFile;
}

async function build(): Promise<string> {
  const file = path.join(FOLDER, `${templateKey()}.tar`);
  if (fs.existsSync(file)) return file;
  const database = await openDatabase({ databaseUrl: null, dataDir: IN_MEMORY_DATA_DIR });
  try {
    await migrate(database, createLog({ logLevel: 'silent' }));
    if (database.listenTarget.kind !== 'pglite') throw new Error('an in-memory database is PGlite');
    const dump = await database.listenTarget.pglite.dumpDataDir('none');
    fs.mkdirSync(FOLDER, { recursive: true });
    const partial = `${file}.${process.pid}.partial`;
    fs.writeFileSync(partial, Buffer.from(await dump.arrayBuffer()));
    fs.renameSync(partial, file);
    return file;
  } finally {
    await database.close();
  }
}
