import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fromRoot } from '../project-root.js';
import { readMigrations } from './migration-files.js';

/**
 * The embedded database's template: a PGlite cluster with every migration applied, built once
 * by `npm run build` (which `npm install` runs) into `dist/database-template/`. A first start
 * copies it into `DATA_DIR` instead of creating a cluster, which costs an initdb in WebAssembly
 * (about 6 s of CPU here, most of a first start) where the copy of its 40 MB takes a tenth of a
 * second. The template holds only the schema: no row, no key, no secret (the migrations insert
 * nothing), so every installation copying it is as one that ran initdb and the migrations itself.
 *
 * The same path from src/ (tsx), dist/ (built) and the suite's mirror, whose dist is a link.
 */
export const TEMPLATE_DIR = fromRoot('dist', 'database-template');
/** The file beside the cluster naming what it was built from (`templateKey`). */
const KEY_FILE = 'key';

/**
 * What a template or image of the migrated database depends on: PGlite's version (its cluster
 * format) and every migration's name and content. A template whose key differs is not used.
 */
export function templateKey(): string {
  const hash = createHash('sha256').update(`pglite ${pgliteVersion()}\n`);
  for (const migration of readMigrations()) hash.update(`${migration.name} ${migration.checksum}\n`);
  return hash.digest('hex').slice(0, 16);
}

/** The key of the template on disk, or null when there is none. */
export function builtTemplateKey(dir = TEMPLATE_DIR): string | null {
  try {
    return fs.readFileSync(path.join(dir, KEY_FILE), 'utf8').trim();
  } catch {
    return null;
  }
}

/** Marks a built cluster as a template of `key` (the last step of building one). */
export function writeTemplateKey(dir: string, key: string): void {
  fs.writeFileSync(path.join(dir, KEY_FILE), `${key}\n`);
}

/**
 * Fills `pgdata` (PGlite's folder in DATA_DIR) with a copy of the template, when the folder holds
 * no cluster yet and the template matches this code's migrations; answers whether it did. The
 * copy goes to a folder of its own and is renamed into place, so a start killed half-way leaves
 * no half cluster behind: the next start finds no cluster and copies again. The caller holds the
 * data folder's lock.
 */
export function seedFromTemplate(pgdata: string): boolean {
  if (fs.existsSync(path.join(pgdata, 'PG_VERSION'))) return false;
  // Something that is not a cluster (a file of the operator's?) is left for PGlite to refuse.
  if (fs.existsSync(pgdata) && fs.readdirSync(pgdata).length > 0) return false;
  if (builtTemplateKey() !== templateKey()) return false;
  const parent = path.dirname(pgdata);
  const partialPrefix = `${path.basename(pgdata)}.partial-`;
  // Copies an earlier start left when it was killed (the lock is ours: nobody else is copying).
  for (const name of fs.readdirSync(parent)) {
    if (name.startsWith(partialPrefix)) fs.rmSync(path.join(parent, name), { recursive: true, force: true });
  }
  const partial = path.join(parent, `${partialPrefix}${process.pid}`);
  fs.cpSync(path.join(TEMPLATE_DIR, 'pgdata'), partial, { recursive: true });
  fs.rmSync(pgdata, { recursive: true, force: true });
  fs.renameSync(partial, pgdata);
  return true;
}

/** The installed PGlite's version: its package exports no package.json, found beside its entry's folder. */
function pgliteVersion(): string {
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite');
  const manifest = JSON.parse(fs.readFileSync(path.join(path.dirname(entry), '../package.json'), 'utf8'));
  if (manifest.name !== '@electric-sql/pglite')
    throw new Error('the package.json of @electric-sql/pglite was not found');
  return manifest.version;
}
