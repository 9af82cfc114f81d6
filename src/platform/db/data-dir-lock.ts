import fs from 'node:fs';
import path from 'node:path';

/**
 * Embedded PGlite must be opened by one process at a time: a second opener (a `migrate` next to
 * a running `serve`) would work on its own copy and corrupt the folder. The lock is a file
 * holding the owner's pid, created exclusively; a lock left by a process that no longer runs
 * is taken over.
 */
export function lockDataDir(dir: string): () => void {
  const file = path.join(dir, 'pglite.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
      return () => fs.rmSync(file, { force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = Number(fs.readFileSync(file, 'utf8'));
      if (owner && owner !== process.pid && isRunning(owner)) {
        throw new Error(`DATA_DIR ${dir} is in use by process ${owner}; stop it first (or use DATABASE_URL)`);
      }
      fs.rmSync(file, { force: true });
    }
  }
  throw new Error(`could not lock DATA_DIR ${dir}`);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
