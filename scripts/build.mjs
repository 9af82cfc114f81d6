// Builds the service into dist/: every source file compiled to JavaScript on its own, then the
// embedded database's template (a cluster with every migration applied, which a first start
// copies instead of creating one; src/platform/db/database-template.ts).
//
//   node scripts/build.mjs             build (what `npm install` and `npm run build` run)
//   node scripts/build.mjs --if-stale  build only when a source or migration is newer than the
//                                      last build (what `npm start` runs first)
//
// Plain JavaScript over esbuild, both runtime dependencies, so it runs on an install without dev
// dependencies. esbuild only strips types (about a second for the whole tree, where tsc took a
// minute on two cores); the types are checked by `npm run typecheck`, which CI runs.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE = path.join(ROOT, 'src');
const OUT = path.join(ROOT, 'dist');
/** Written last: the build's moment, which --if-stale compares the sources with. */
const STAMP = path.join(OUT, '.build-stamp');
/** Kept across builds: rebuilt only when the migrations or PGlite change (its own key says so). */
const KEPT = new Set(['database-template']);
/** What the service never loads: tests, their harness, the
 * dashboard's browser app (bundled from its sources when first asked for). */
const isShipped = (file) =>
  file.endsWith('.ts') &&
  !file.endsWith('.test.ts') &&
  !file.endsWith('.d.ts') &&
  !file.startsWith(path.join(SOURCE, 'testing') + path.sep) &&
  !file.startsWith(path.join(SOURCE, 'dashboard', 'app') + path.sep);

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? walk(full) : entry.isFile() ? [full] : [];
  });
}

/** Whether a source or migration changed since the last build (a new or deleted file too). */
function isStale() {
  const builtAt = fs.statSync(STAMP, { throwIfNoEntry: false })?.mtimeMs;
  if (builtAt === undefined) return true;
  const inputs = [SOURCE, path.join(ROOT, 'migrations')];
  // A folder's own time moves when a file in it is added, removed or renamed.
  const times = inputs.flatMap((dir) => [
    ...walkFolders(dir).map((folder) => fs.statSync(folder).mtimeMs),
    ...walk(dir).map((file) => fs.statSync(file, { throwIfNoEntry: false })?.mtimeMs ?? 0),
  ]);
  return Math.max(...times, fs.statSync(path.join(ROOT, 'package.json')).mtimeMs) >= builtAt;
}

function walkFolders(dir) {
  return [
    dir,
    ...fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .flatMap((entry) => walkFolders(path.join(dir, entry.name))),
  ];
}

async function compile() {
  fs.mkdirSync(OUT, { recursive: true });
  for (const entry of fs.readdirSync(OUT)) {
    if (!KEPT.has(entry)) fs.rmSync(path.join(OUT, entry), { recursive: true, force: true });
  }
  const tsconfig = JSON.parse(fs.readFileSync(path.join(ROOT, 'tsconfig.json'), 'utf8'));
  await build({
    entryPoints: walk(SOURCE).filter(isShipped),
    outdir: OUT,
    outbase: SOURCE,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    bundle: false,
    logLevel: 'warning',
    tsconfigRaw: { compilerOptions: tsconfig.compilerOptions },
  });
  await bundleExecutable(tsconfig);
}

/**
 * dist/cli.js, the executable, bundled with the service and the packages it loads, over the
 * file-by-file dist/cli.js. Loading the service file by file opened about 1,600 modules
 * (TypeBox alone is 374 files, Kysely 264), which cost a second of every start and of every CLI
 * command; one file costs a tenth of that. The other compiled files stay for what loads them
 * separately: this script (the database template) and the probe listener's thread.
 *
 * Kept outside the bundle, loaded from node_modules as before: PGlite and esbuild (they find
 * their WebAssembly, data and binaries beside their own files), `pg` and OpenTelemetry (tracing
 * instruments `pg` by hooking its loading, which a bundled copy would escape). What cli.ts imports
 * dynamically (the service, the database) stays a chunk of its own under dist/bundle/, loaded when
 * it is imported as before: tracing registers its hooks first, so `pg` is loaded after them.
 */
async function bundleExecutable(tsconfig) {
  await build({
    entryPoints: { cli: path.join(SOURCE, 'cli.ts') },
    outdir: OUT,
    chunkNames: 'bundle/[name]-[hash]',
    splitting: true,
    allowOverwrite: true,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: true,
    // sharp loads its native image library from a package beside it (@img/sharp-*).
    external: ['@electric-sql/pglite', 'esbuild', 'pg', 'pg-native', '@opentelemetry/*', '@fastify/otel', 'sharp'],
    // CommonJS packages inside an ES module bundle call require() for Node.js's own modules.
    banner: { js: "import { createRequire as __bundleRequire } from 'node:module';\nconst require = __bundleRequire(import.meta.url);" },
    logLevel: 'warning',
    tsconfigRaw: { compilerOptions: tsconfig.compilerOptions },
  });
}

async function main() {
  const onlyIfStale = process.argv.includes('--if-stale');
  if (onlyIfStale && !isStale()) return;
  const started = performance.now();
  await compile();
  const template = pathToFileURL(path.join(OUT, 'platform/db/build-database-template.js'));
  const { buildDatabaseTemplate } = await import(template.href);
  await buildDatabaseTemplate();
  fs.writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stderr.write(`built dist/ in ${seconds} s\n`);
}

await main();
