import { createHash } from 'node:crypto';
import path from 'node:path';
import { build } from 'esbuild';
import { fromRoot } from '../platform/project-root.js';

/**
 * The dashboard's front end, bundled in memory by esbuild. The entries are found from the project
 * root, which is two folders up from src/dashboard/bundle.ts (tsx), dist/dashboard/bundle.js
 * (npm start) and the suite's dist-test/run-<pid>/src/dashboard/bundle.js (whose app folder holds
 * links to the sources), so all run the same build from the same sources.
 */
const APP = fromRoot('src', 'dashboard', 'app');
const SCRIPT = path.join(APP, 'main.tsx');
const STYLES = path.join(APP, 'styles.css');

export interface Asset {
  body: string;
  /** A strong validator of the body, for conditional requests. */
  etag: string;
}

export interface DashboardBundle {
  js: Asset;
  css: Asset;
}

async function buildBundle(): Promise<DashboardBundle> {
  const result = await build({
    entryPoints: [
      { in: SCRIPT, out: 'app' },
      { in: STYLES, out: 'app' },
    ],
    bundle: true,
    write: false,
    outdir: 'dashboard-assets',
    format: 'esm',
    target: ['es2022'],
    platform: 'browser',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    sourcemap: false,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const asset = (extension: string): Asset => {
    const file = result.outputFiles.find((output) => output.path.endsWith(extension));
    if (!file) throw new Error(`The dashboard bundle has no ${extension} output`);
    const hash = createHash('sha256').update(file.contents).digest('base64url').slice(0, 22);
    return { body: file.text, etag: `"${hash}"` };
  };
  return { js: asset('.js'), css: asset('.css') };
}

let pending: Promise<DashboardBundle> | null = null;

/**
 * The process's one bundle, shared by every core host it runs (tests start several): built on
 * the first asset request and kept. A failed build is not kept, so the next request tries again.
 */
export function dashboardBundle(): Promise<DashboardBundle> {
  pending ??= buildBundle().catch((error: unknown) => {
    pending = null;
    throw error;
  });
  return pending;
}
