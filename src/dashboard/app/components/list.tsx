import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, withQuery as apiPathWithQuery, download, type Query } from '../api';
import { plural } from '../format';
import { navigate, queryOf, screenOf, useHashPath, withQuery } from '../router';
import { FormError } from './form';
import { useAction, useLoad } from './use-api';

export interface Column<T> {
  title: string;
  cell(row: T): ComponentChildren;
  /**
   * The API's sort column when the list can be sorted on it, with a leading - when the first
   * click sorts descending (dates: newest first).
   */
  sort?: string;
  /**
   * Its place in the row's card on a narrow screen: `status` at the top beside the row's title,
   * `figure` (an amount, an expiry) large beneath them. Other columns follow as label and value.
   */
  card?: 'status' | 'figure';
}

/** A list's sort as the API names it (`email`, `-createdAt`), and how to change it. */
export interface Sorting {
  sort: string;
  onSort(sort: string): void;
}

/** The sort a click on a column's heading asks: the other direction if sorted on it, else its first. */
export function nextSort(first: string, current: string): string {
  const column = first.replace(/^-/, '');
  if (current === column) return `-${column}`;
  if (current === `-${column}`) return column;
  return first;
}

function SortHeading({ title, first, sorting }: { title: string; first: string; sorting: Sorting }) {
  const column = first.replace(/^-/, '');
  const direction =
    sorting.sort === column ? 'ascending' : sorting.sort === `-${column}` ? 'descending' : undefined;
  return (
    <th scope="col" class="sortable" aria-sort={direction}>
      <button type="button" class="sort" onClick={() => sorting.onSort(nextSort(first, sorting.sort))}>
        {title}
        <span aria-hidden="true">
          {direction === 'ascending' ? ' ▲' : direction === 'descending' ? ' ▼' : ''}
        </span>
      </button>
    </th>
  );
}

const idOf = (row: unknown) => (row as { id: string }).id;

/**
 * A list as a table: the first column heads each row, and `actions` (a row's buttons) come last
 * under a heading only screen readers read. Without rows, `empty` stands instead, with no pager.
 * Below 40rem each row is drawn as a card (styles.css): its first column as the title, each other
 * cell under its column's title (`data-label`), the sortable headings as a row of buttons.
 */
export function ListTable<T>({
  caption,
  rows,
  columns,
  rowKey = idOf,
  actions,
  empty,
  pager,
  sorting,
  busy,
}: {
  caption: string;
  rows: readonly T[];
  columns: readonly Column<T>[];
  /** Headings of columns with a `sort` become buttons that sort the list. */
  sorting?: Sorting;
  /** The rows shown are being replaced (a new sort, filter or page is loading): aria-busy. */
  busy?: boolean;
  /** The row's `id` when absent. */
  rowKey?(row: T): string;
  actions?(row: T): ComponentChildren;
  empty?: ComponentChildren;
  pager?: ComponentChildren;
}) {
  if (rows.length === 0) return <>{empty}</>;
  const [head, ...rest] = columns;
  return (
    <>
      <div class="table-scroll">
        <table class="list-table" aria-busy={busy === undefined ? undefined : busy}>
          <caption class="visually-hidden">{caption}</caption>
          <thead>
            <tr>
              {columns.map((column) =>
                column.sort && sorting ? (
                  <SortHeading
                    key={column.title}
                    title={column.title}
                    first={column.sort}
                    sorting={sorting}
                  />
                ) : (
                  <th key={column.title} scope="col">
                    {column.title}
                  </th>
                ),
              )}
              {actions && (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={rowKey(row)}>
                {head && <th scope="row">{head.cell(row)}</th>}
                {rest.map((column) => (
                  <td
                    key={column.title}
                    data-label={column.title}
                    class={column.card ? `cell-${column.card}` : undefined}
                  >
                    {column.cell(row)}
                  </td>
                ))}
                {actions && <td class="cell-actions">{actions(row)}</td>}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {pager}
    </>
  );
}

interface Step {
  label: string;
  disabled: boolean;
  go(): void;
}

function PagerNav({
  label,
  previous,
  next,
  children,
}: {
  label: string;
  previous: Step;
  next: Step;
  children: ComponentChildren;
}) {
  const button = (step: Step) => (
    <button type="button" class="secondary" disabled={step.disabled} onClick={() => step.go()}>
      {step.label}
    </button>
  );
  return (
    <nav class="pager" aria-label={`${label} pages`}>
      {button(previous)}
      <span>{children}</span>
      {button(next)}
    </nav>
  );
}

/** Previous and next for an offset-paginated list. */
export function Pager({
  label,
  page: { total, limit, offset },
  onOffset,
}: {
  label: string;
  page: { total: number; limit: number; offset: number };
  onOffset(offset: number): void;
}) {
  if (total <= limit && offset === 0) return null;
  const last = Math.min(offset + limit, total);
  return (
    <PagerNav
      label={label}
      previous={{
        label: 'Previous',
        disabled: offset === 0,
        go: () => onOffset(Math.max(0, offset - limit)),
      }}
      next={{ label: 'Next', disabled: last >= total, go: () => onOffset(offset + limit) }}
    >
      {total === 0 ? 0 : offset + 1}–{last} of {total}
    </PagerNav>
  );
}

/** Back and forth for a list numbered in pages from 1; `previous` and `next` name the ways. */
export function NumberedPager({
  label,
  page: { total, limit, page },
  onPage,
  previous = 'Previous',
  next = 'Next',
}: {
  label: string;
  page: { total: number; limit: number; page: number };
  onPage(page: number): void;
  previous?: string;
  next?: string;
}) {
  if (total <= limit) return null;
  return (
    <PagerNav
      label={label}
      previous={{ label: previous, disabled: page <= 1, go: () => onPage(page - 1) }}
      next={{ label: next, disabled: page * limit >= total, go: () => onPage(page + 1) }}
    >
      Page {page} of {Math.ceil(total / limit)}
    </PagerNav>
  );
}

/** How many rows a list holds ("3 licenses found."), said to screen readers as it changes. */
export function ResultCount({
  total,
  noun: [one, many],
  searching,
  none,
}: {
  total: number;
  noun: [string, string];
  searching: boolean;
  /** What stands when the list is empty. */
  none: string;
}) {
  return (
    <p aria-live="polite">
      {total === 0 ? none : `${plural(total, one, many)}${searching ? ' found' : ''}.`}
    </p>
  );
}

/**
 * An offset-paginated list read from `path` with a filter in its query. A new filter starts
 * again from the first page, in the same render, so the list is read once.
 */
export function useOffsetList<P, F extends Query = Record<never, never>>(path: string, initial = {} as F) {
  const [{ filter, offset }, setQuery] = useState({ filter: initial, offset: 0 });
  const list = useLoad(() => api.get<P>(path, { ...filter, offset }), JSON.stringify([path, filter, offset]));
  return {
    ...list,
    filter,
    filterBy: (next: F) => setQuery({ filter: next, offset: 0 }),
    setOffset: (next: number) => setQuery({ filter, offset: next }),
  };
}

/**
 * A list whose filters, sort and page live in the screen's URL (#/licenses?email=ann&sort=email):
 * a search can be bookmarked and shared, a reload keeps it, and the back button steps back
 * through it. `fields` are the query parameters read from the URL and sent to `path` (the API).
 */
export function useUrlList<P, F extends string>(path: string, fields: readonly F[]) {
  const current = useHashPath();
  const screen = screenOf(current);
  const query = queryOf(current);
  const filter = Object.fromEntries(fields.map((field) => [field, query.get(field) ?? ''])) as Record<
    F,
    string
  >;
  const offset = Math.max(0, Math.floor(Number(query.get('offset')))) || 0;
  const list = useLoad(() => api.get<P>(path, { ...filter, offset }), JSON.stringify([path, filter, offset]));
  return {
    ...list,
    filter,
    /** The filter and sort as the API's query (what an export of the same list sends). */
    apiQuery: filter as Query,
    /** A new filter or sort starts again from the first page. */
    filterBy: (next: Partial<Record<F, string>>) => navigate(withQuery(screen, { ...filter, ...next })),
    setOffset: (next: number) => navigate(withQuery(screen, { ...filter, offset: next })),
  };
}

/**
 * "Export CSV" of a list as filtered and sorted now. The link names the API's export (which an
 * API key can fetch as is); a click downloads it with the session's token.
 */
export function ExportLink({ path, query, filename }: { path: string; query: Query; filename: string }) {
  const action = useAction();
  return (
    <p class="export">
      <a
        href={`/v1${apiPathWithQuery(path, query)}`}
        download={filename}
        aria-disabled={action.busy}
        onClick={(event) => {
          event.preventDefault();
          if (!action.busy) void action.run(() => download(path, query, filename));
        }}
      >
        Export CSV
      </a>
      <FormError error={action.error} />
    </p>
  );
}
