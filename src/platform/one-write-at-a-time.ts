/**
 * A background write that runs one at a time. Asked while a write runs, it runs once more after
 * that one, and every caller asking meanwhile shares that next run, so whatever each recorded
 * before asking is in it. `write` must not reject (it reports failure in its result).
 */
export function oneWriteAtATime<T>(write: () => Promise<T>): () => Promise<T> {
  let writing: Promise<T> | null = null;
  let queued: Promise<T> | null = null;
  const run = (): Promise<T> => {
    if (!writing) {
      writing = write().finally(() => {
        writing = null;
      });
      return writing;
    }
    queued ??= writing.then(() => {
      queued = null;
      return run();
    });
    return queued;
  };
  return run;
}
