import fs from 'node:fs';
import { createLog } from '../log.js';
import { openDatabase } from './database.js';
import { builtTemplateKey, TEMPLATE_DIR, templateKey, writeTemplateKey } from './database-template.js';
import { migrate } from './migrate.js';

/**
 * Builds the embedded database's template (database-template.ts) unless the one on disk was
 * built from these migrations and this PGlite already: `scripts/build.mjs` calls it after
 * compiling. Built beside the old one and renamed over it, so a build stopped half-way leaves
 * either the old template or none, never a half one.
 */
export async function buildDatabaseTemplate(): Promise<void> {
  const key = templateKey();
  if (builtTemplateKey() === key) return;
  const partial = `${TEMPLATE_DIR}.partial-${process.pid}`;
  fs.rmSync(partial, { recursive: true, force: true });
  const database = await openDatabase({ databaseUrl: null, dataDir: partial });
  try {
    await migrate(database, createLog({ logLevel: 'silent' }));
  } finally {
    await database.close();
  }
  writeTemplateKey(partial, key);
  fs.rmSync(TEMPLATE_DIR, { recursive: true, force: true });
  fs.renameSync(partial, TEMPLATE_DIR);
}
