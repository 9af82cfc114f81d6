import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { transform } from 'esbuild';

/**
 * `npm test`: the suite, compiled to JavaScript first, then run by node's test runner without a
 * loader. Under `node --import tsx` every test file paid about 2.5 s of CPU for tsx's loader hooks
 * (on Node.js 20 each module's resolve and load is a round trip to the hooks' thread), about a
 * fifth of the suite's CPU (docs/performance.md, "The test suite's time").
 *
 * The compiled tree is a mirror of the project under `dist-test/run-<pid>/` (one per run, so two
 * runs in one checkout do not meet; removed when the run ends): every `.ts` file under `src`
 * and `packages/*` becomes a `.js` file at the same path, transformed by esbuild file by file
 * with the options tsx uses, so the code that runs is what `node --import tsx` runs. Every other
 * file, the `.ts` sources included, is linked beside it, and so are the top-level entries that
 * code finds relative to itself (package.json, the migrations, dist, artifacts). Packages resolve
 * from the project's node_modules, one folder up. Names of test files given as arguments run only
 * those (`npm test -- src/modules/users/users.test.ts`); with none, every `*.test.ts` runs.
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MIRRORS = path.join(ROOT, 'dist-test');
const MIRROR = path.join(MIRRORS, `run-${process.pid}`);
const TREES = ['src', 'packages'];
const LINKED_AT_TOP = ['package.json', 'migrations', 'dist', 'artifacts'];
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist']);
const RUNNER_ARGS = ['--test', '--test-concurrency=4', '--test-timeout=900000'];

async function main(): Promise<void> {
  const started = performance.now();
  await removeMirrorsOfEndedRuns();
  await fs.mkdir(path.join(ROOT, 'artifacts'), { recursive: true });
  await fs.mkdir(MIRROR, { recursive: true });
  for (const entry of LINKED_AT_TOP) await link(path.join(ROOT, entry), path.join(MIRROR, entry));

  const tests: string[] = [];
  const files = (await Promise.all(TREES.map((tree) => walk(path.join(ROOT, tree))))).flat();
  await Promise.all(
    files.map(async (file) => {
      const mirrored = path.join(MIRROR, path.relative(ROOT, file));
      await fs.mkdir(path.dirname(mirrored), { recursive: true });
      await link(file, mirrored);
      if (!isCompiled(file)) return;
      const compiled = mirrored.replace(/\.ts$/, '.js');
      await fs.writeFile(compiled, await compile(file));
      if (file.endsWith('.test.ts')) tests.push(compiled);
    }),
  );
  const chosen = process.argv.slice(2);
  const run = chosen.length > 0 ? chosen.map(mirroredTest) : tests.sort();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const where = path.relative(ROOT, MIRROR);
  process.stdout.write(`# compiled ${files.filter(isCompiled).length} files to ${where} in ${seconds} s\n`);

  const child = spawn(process.execPath, ['--enable-source-maps', ...RUNNER_ARGS, ...run], {
    stdio: 'inherit',
  });
  // A Ctrl-C reaches the runner through the terminal's process group; wait for it to finish.
  process.on('SIGINT', () => {});
  child.on('exit', async (code, signal) => {
    await fs.rm(MIRROR, { recursive: true, force: true });
    process.exit(code ?? (signal ? 1 : 0));
  });
}

/** A run that was killed leaves its mirror behind: removed by the next run. */
async function removeMirrorsOfEndedRuns(): Promise<void> {
  const names = await fs.readdir(MIRRORS).catch(() => []);
  for (const name of names) {
    const pid = Number(/^run-(\d+)$/.exec(name)?.[1]);
    if (pid && pid !== process.pid && isRunning(pid)) continue;
    await fs.rm(path.join(MIRRORS, name), { recursive: true, force: true });
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function walk(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return SKIPPED_FOLDERS.has(entry.name) ? [] : walk(full);
      return entry.isFile() ? [full] : [];
    }),
  );
  return nested.flat();
}

function isCompiled(file: string): boolean {
  return file.endsWith('.ts') && !file.endsWith('.d.ts');
}

async function compile(file: string): Promise<string> {
  const source = await fs.readFile(file, 'utf8');
  const result = await transform(source, {
    loader: 'ts',
    format: 'esm',
    target: `node${process.versions.node}`,
    sourcemap: 'inline',
    sourcefile: file,
    // What tsx reads from tsconfig.json that changes the output.
    tsconfigRaw: { compilerOptions: { verbatimModuleSyntax: true, useDefineForClassFields: true } },
  });
  return result.code;
}

function mirroredTest(name: string): string {
  const relative = path.relative(ROOT, path.resolve(name));
  if (relative.startsWith('..') || !relative.endsWith('.test.ts')) {
    process.stderr.write(`not a test file of this project: ${name}\n`);
    process.exit(2);
  }
  return path.join(MIRROR, relative.replace(/\.ts$/, '.js'));
}

async function link(target: string, at: string): Promise<void> {
  await fs.symlink(path.relative(path.dirname(at), target), at);
}

await main();
