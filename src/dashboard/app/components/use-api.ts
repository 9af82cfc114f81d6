import { useCallback, useEffect, useState } from 'preact/hooks';
import { ApiError } from '../api';

function asApiError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  return new ApiError(0, 'client_error', error instanceof Error ? error.message : String(error));
}

export interface Loaded<T> {
  data: T | undefined;
  error: ApiError | null;
  loading: boolean;
  reload(): void;
}

/** Loads data for a screen, again whenever `key` changes or reload() is called. */
export function useLoad<T>(load: () => Promise<T>, key: string): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(true);
  /** The key `data` or `error` was read for: until the read for a new key settles, it is loading. */
  const [loadedKey, setLoadedKey] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  // `key` names what `load` reads, so `load` itself (a new closure each render) is not a dependency.
  useEffect(() => {
    let current = true;
    setLoading(true);
    load().then(
      (value) => {
        if (!current) return;
        setData(value);
        setError(null);
        setLoadedKey(key);
        setLoading(false);
      },
      (failure: unknown) => {
        if (!current) return;
        setError(asApiError(failure));
        setLoadedKey(key);
        setLoading(false);
      },
    );
    return () => {
      current = false;
    };
  }, [key, version]);
  const reload = useCallback(() => setVersion((v) => v + 1), []);
  return { data, error, loading: loading || loadedKey !== key, reload };
}

export interface Action {
  busy: boolean;
  error: ApiError | null;
  /** Runs the work, keeping its error for the form to show; true when it succeeded. */
  run(work: () => Promise<unknown>): Promise<boolean>;
  clear(): void;
}

/** A form's or a button's call to the API: busy while it runs, and its error afterwards. */
export function useAction(): Action {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  const run = useCallback(async (work: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
      return true;
    } catch (failure) {
      setError(asApiError(failure));
      return false;
    } finally {
      setBusy(false);
    }
  }, []);
  const clear = useCallback(() => setError(null), []);
  return { busy, error, run, clear };
}
