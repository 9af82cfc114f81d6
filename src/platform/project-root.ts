import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project's package name, which marks its root folder. */
const PACKAGE_NAME = 'licensing-service';

/**
 * The project's root folder, the one holding its package.json, migrations/, dist/ and src/:
 * the nearest folder above this module whose package.json names this package. Found rather than
 * counted (`../../..`) because this module runs from several depths: src/ (tsx), dist/ compiled
 * file by file, the suite's mirror (dist-test/run-<pid>/, whose package.json is a link), and
 * dist/cli.bundle.js, where every module of the service shares the bundle's own location.
 */
export const PROJECT_ROOT = findRoot(path.dirname(fileURLToPath(import.meta.url)));

/** A path under the project's root. */
export function fromRoot(...segments: string[]): string {
  return path.join(PROJECT_ROOT, ...segments);
}

function findRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest) && readName(manifest) === PACKAGE_NAME) return dir;
    if (path.dirname(dir) === dir) {
      throw new Error(`no folder above ${start} holds the package.json of ${PACKAGE_NAME}`);
    }
  }
}

function readName(manifest: string): string | undefined {
  try {
    return (JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: string }).name;
  } catch {
    return undefined;
  }
}
