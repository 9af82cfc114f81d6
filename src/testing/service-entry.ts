import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// The project's own folder, also when this file runs from the compiled mirror of the suite
// (dist-test, where package.json is a link back to it): the sources and the build are there.
const ROOT = path.dirname(fs.realpathSync(fileURLToPath(new URL('../../package.json', import.meta.url))));

let entry: string | null = null;

/**
 * The command line as deployed, for the processes that tests and benchmarks start: the built
 * `dist/cli.js` when it is at least as new as every file under `src`, else `src/cli.ts`, run
 * through tsx. The same code once loaded; the built one starts on about 1.5 s less CPU here (tsx's
 * loader hooks), over some thirty processes a suite. `.ci/run` builds before it tests; after
 * an edit, the sources run until the next build. An absolute path.
 */
export function serviceEntry(): string {
  entry ??= find();
  return entry;
}

/** The arguments that run `entry` with node: tsx's loader for a source file. */
export function nodeArgsFor(entryPath: string): string[] {
  return entryPath.endsWith('.ts') ? ['--import', 'tsx', entryPath] : [entryPath];
}

function find(): string {
  const built = path.join(ROOT, 'dist/cli.js');
  const source = path.join(ROOT, 'src/cli.ts');
  if (!fs.existsSync(built)) return source;
  const builtAt = fs.statSync(built).mtimeMs;
  const newest = (dir: string): number =>
    Math.max(
      fs.statSync(dir).mtimeMs,
      ...fs.readdirSync(dir, { withFileTypes: true }).map((file) => {
        const full = path.join(dir, file.name);
        if (file.isDirectory()) return newest(full);
        // An editor's temporary file may be gone by now: it changes nothing either way.
        return fs.statSync(full, { throwIfNoEntry: false })?.mtimeMs ?? 0;
      }),
    );
  // Strictly newer: a file saved in the build's own second (coarse clocks) runs from source.
  return newest(path.join(ROOT, 'src')) < builtAt ? built : source;
}
