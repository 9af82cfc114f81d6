// Builds dist/ for npm: ESM in dist/esm, CommonJS in dist/cjs (a package.json there says so),
// each with its own declarations.
//
// Why esbuild for the JavaScript and tsc only for the declarations: jose is ESM-only, and the
// verifier loads it with import(). tsc compiling to CommonJS would turn that import() into
// require(), which throws on Node before 20.19; esbuild keeps it, so require('@licensing/client')
// works on every Node 20. Files are transformed one by one, not bundled, so the root entry and
// /server share one copy of each class (instanceof works whichever entry a class came from).
import { execFileSync } from 'node:child_process';
import { copyFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = fileURLToPath(new URL('.', import.meta.url));
const require = createRequire(import.meta.url);
process.chdir(here);

// index.ts only re-exports server.ts for this repository's own imports; it is not published.
const sources = readdirSync('src').filter(
  (name) => name.endsWith('.ts') && !name.endsWith('.test.ts') && name !== 'index.ts',
);

rmSync('dist', { recursive: true, force: true });
for (const format of ['esm', 'cjs']) {
  await build({
    entryPoints: sources.map((name) => `src/${name}`),
    outdir: `dist/${format}`,
    format,
    platform: 'neutral',
    target: 'es2022',
    bundle: false,
    logLevel: 'warning',
  });
}
writeFileSync('dist/cjs/package.json', `${JSON.stringify({ type: 'commonjs' })}\n`);

// Type-checks too. The same declarations serve both formats: under dist/cjs they are read as
// CommonJS because of the package.json there.
execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.json'], {
  stdio: 'inherit',
});
for (const name of readdirSync('dist/esm').filter((file) => file.endsWith('.d.ts'))) {
  copyFileSync(`dist/esm/${name}`, `dist/cjs/${name}`);
}
