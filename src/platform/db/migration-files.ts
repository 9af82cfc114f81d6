import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fromRoot } from '../project-root.js';

/** The same folder from src/ (tsx), dist/ (compiled) and the suite's mirror (dist-test/run-<pid>/src). */
export const MIGRATIONS_DIR = fromRoot('migrations');

export interface MigrationFile {
  version: string;
  name: string;
  sql: string;
  checksum: string;
}

export function readMigrations(dir = MIGRATIONS_DIR): MigrationFile[] {
  const files = fs
    .readdirSync(dir)
    .filter((file) => /^\d{4}_[\w-]+\.sql$/.test(file))
    .sort()
    .map((file) => {
      const text = fs.readFileSync(path.join(dir, file), 'utf8');
      return {
        version: file.slice(0, 4),
        name: file.replace(/\.sql$/, ''),
        sql: text,
        checksum: createHash('sha256').update(text).digest('hex'),
      };
    });
  for (const [index, file] of files.entries()) {
    if (files[index - 1]?.version === file.version) {
      throw new Error(
        `two migrations share version ${file.version}: ${files[index - 1]?.name} and ${file.name}`,
      );
    }
  }
  return files;
}
