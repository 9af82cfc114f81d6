import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import type { ApiError } from '../api';

let firstScreen = true;

/**
 * A screen's heading. After a move between screens focus goes to it, so screen readers announce
 * where the user now is; on the first screen of a visit focus stays where the browser put it.
 */
export function Page({
  title,
  children,
  actions,
}: {
  title: string;
  children: ComponentChildren;
  actions?: ComponentChildren;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${title} · Seller dashboard`;
  }, [title]);
  // Screens are keyed by their path, so this runs once per move to a screen.
  useEffect(() => {
    if (firstScreen) firstScreen = false;
    else heading.current?.focus();
  }, []);
  return (
    <>
      <div class="page-head">
        <h1 ref={heading} tabIndex={-1}>
          {title}
        </h1>
        {actions && <div class="actions">{actions}</div>}
      </div>
      {children}
    </>
  );
}

/** The three states of loaded data: waiting, failed (with the API's message), or there. */
export function Loading<T>({
  state,
  children,
}: {
  state: { data: T | undefined; error: ApiError | null; loading: boolean };
  children(data: T): ComponentChildren;
}) {
  if (state.error)
    return (
      <p class="form-error" role="alert">
        {state.error.message}
      </p>
    );
  if (state.data === undefined) return <p class="muted">Loading…</p>;
  return <>{children(state.data)}</>;
}

/** Previous and next for an offset-paginated list. */
export function Pager({
  total,
  limit,
  offset,
  onOffset,
  label,
}: {
  total: number;
  limit: number;
  offset: number;
  onOffset(offset: number): void;
  label: string;
}) {
  if (total <= limit && offset === 0) return null;
  const last = Math.min(offset + limit, total);
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      <button
        type="button"
        class="secondary"
        disabled={offset === 0}
        onClick={() => onOffset(Math.max(0, offset - limit))}
      >
        Previous
      </button>
      <span>
        {total === 0 ? 0 : offset + 1}–{last} of {total}
      </span>
      <button
        type="button"
        class="secondary"
        disabled={last >= total}
        onClick={() => onOffset(offset + limit)}
      >
        Next
      </button>
    </nav>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status.replace(/[^a-z_]/gi, '')}`}>{status.replace(/_/g, ' ')}</span>;
}
