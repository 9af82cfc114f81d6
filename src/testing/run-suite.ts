import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type TsconfigRaw, transform } from 'esbuild';

/**
 * `npm test`: the suite, compiled to JavaScript first, then run by node's test runner without a
 * loader. Under `node --import tsx` every test file paid for tsx's loader hooks (on Node.js 20
 * each module's resolve and load is a round trip to the hooks' thread): 8 % of the suite's CPU,
 * and 2.5 s of CPU a file on a slow machine (docs/performance.md, "The test suite's time").
 *
 * The compiled tree is a mirror of the project under `dist-test/run-<pid>/` (one per run, so two
 * runs in one checkout do not meet; removed when the run ends): every `.ts` file under `src`
 * and `packages/*` becomes a `.js` file at the same path, transformed by esbuild file by file
 * with tsx's options and tsconfig.json's compiler options, so the code that runs is what
 * `node --import tsx` runs. Every other file, the `.ts` sources included, is linked beside it,
 * and so are the top-level entries that code finds relative to itself (package.json, the
 * migrations, dist, artifacts). Packages resolve from the project's node_modules, two folders up.
 *
 * Arguments: test files run only those (`npm test -- src/modules/users/users.test.ts`); with
 * none, every `*.test.ts` runs. Arguments that begin with `-` go to the runner
 * (`npm test -- --test-name-pattern=refund`).
 */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const MIRRORS = path.join(ROOT, 'dist-test');
const MIRROR = path.join(MIRRORS, `run-${process.pid}`);
const TREES = ['src', 'packages'];
const LINKED_AT_TOP = ['package.json', 'migrations', 'dist', 'artifacts'];
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist']);
const RUNNER_ARGS = ['--test', '--test-concurrency=4', '--test-timeout=900000'];
const FORWARDED_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

async function main(): Promise<number> {
  const args = process.argv.slice(2);
  const runnerFlags = args.filter((arg) => arg.startsWith('-'));
  const chosen = args.filter((arg) => !arg.startsWith('-'));
  const unknown = chosen.filter((name) => mirroredTest(name) === null);
  if (unknown.length > 0) {
    process.stderr.write(`not a test file of this project: ${unknown.join(', ')}\n`);
    return 2;
  }
  await removeMirrorsOfEndedRuns();
  try {
    const tests = await buildMirror();
    const run = chosen.length > 0 ? chosen.map((name) => mirroredTest(name) as string) : tests;
    return await runTests([...runnerFlags, ...run]);
  } finally {
    await fs.rm(MIRROR, { recursive: true, force: true });
  }
}

/** Writes the mirror; returns its compiled test files in the order they run. */
async function buildMirror(): Promise<string[]> {
  const started = performance.now();
  const compilerOptions = JSON.parse(await fs.readFile(path.join(ROOT, 'tsconfig.json'), 'utf8'))
    .compilerOptions as TsconfigRaw['compilerOptions'];
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
      await fs.writeFile(compiled, await compile(file, compilerOptions));
      if (file.endsWith('.test.ts')) tests.push(compiled);
    }),
  );
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  const where = path.relative(ROOT, MIRROR);
  process.stdout.write(`# compiled ${files.filter(isCompiled).length} files to ${where} in ${seconds} s\n`);
  return tests.sort();
}

/**
 * Node's test runner on the compiled files; resolves with the exit code to pass on. A signal sent
 * to this process (a Ctrl-C, a CI job's cancel, `timeout`) is passed to the runner, which reports
 * what it has and ends; this process then ends as the runner did.
 */
function runTests(args: string[]): Promise<number> {
  const child = spawn(process.execPath, ['--enable-source-maps', ...RUNNER_ARGS, ...args], {
    stdio: 'inherit',
  });
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  for (const signal of FORWARDED_SIGNALS) process.on(signal, forward);
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      for (const name of FORWARDED_SIGNALS) process.off(name, forward);
      resolve(code ?? 128 + (signal ? os.constants.signals[signal] : 0));
    });
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

async function compile(file: string, compilerOptions: TsconfigRaw['compilerOptions']): Promise<string> {
  const source = await fs.readFile(file, 'utf8');
  const result = await transform(source, {
    loader: 'ts',
    format: 'esm',
    target: `node${process.versions.node}`,
    sourcemap: 'inline',
    sourcefile: file,
    // As tsx transforms: names of functions and classes kept as written (a stack, a log's name).
    keepNames: true,
    tsconfigRaw: { compilerOptions },
  });
  return result.code;
}

/** The compiled file of a test file named on the command line, or null when it is not one. */
function mirroredTest(name: string): string | null {
  const relative = path.relative(ROOT, path.resolve(name));
  if (relative.startsWith('..') || !relative.endsWith('.test.ts')) return null;
  return path.join(MIRROR, relative.replace(/\.ts$/, '.js'));
}

async function link(target: string, at: string): Promise<void> {
  await fs.symlink(path.relative(path.dirname(at), target), at);
}

process.exitCode = await main();
