import { type ComponentChildren, Fragment, type RefObject } from 'preact';
import { useEffect, useId, useRef } from 'preact/hooks';
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

/**
 * A part of a screen, named by its heading (a region, to assistive technology). With
 * `headingRef`, the heading can take focus when the screen sends the user there.
 */
export function Section({
  title,
  headingRef,
  children,
}: {
  title: string;
  headingRef?: RefObject<HTMLHeadingElement | null>;
  children: ComponentChildren;
}) {
  const id = useId();
  return (
    <section aria-labelledby={id}>
      <h2 id={id} ref={headingRef} tabIndex={headingRef ? -1 : undefined}>
        {title}
      </h2>
      {children}
    </section>
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

/** A thing's properties as a description list, in the order given. */
export function Facts({ facts }: { facts: Record<string, ComponentChildren> }) {
  return (
    <dl class="facts">
      {Object.entries(facts).map(([term, value]) => (
        <Fragment key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </Fragment>
      ))}
    </dl>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status.replace(/[^a-z_]/gi, '')}`}>{status.replace(/_/g, ' ')}</span>;
}
