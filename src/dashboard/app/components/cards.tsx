import type { ComponentChildren } from 'preact';
import { useRef } from 'preact/hooks';
import { useWidth } from './use-width';

/** One figure: what it is, its value, and a line or two about it. */
export interface Figure {
  title: string;
  value: string;
  note?: string;
  /** How it compares with an earlier period, under the note. */
  compare?: ComponentChildren;
}

/** A card's comfortable width; two narrower ones side by side beat one on a phone. */
const CARD_WIDTH = 192;
const NARROW_CARD_WIDTH = 136;
/** The grid's gap (0.75rem) and the most columns the stylesheet has classes for. */
const GAP = 12;
const MOST_COLUMNS = 6;

/**
 * How many columns `count` cards take in `width` pixels so that none sits alone on a row: the
 * fewest rows, and of those the fewest columns (the fullest last row), never leaving one card
 * under a row of several. When only two columns fit and the count is odd, the last card spans
 * the row (`spanLast`).
 */
export function cardColumns(count: number, width: number): { columns: number; spanLast: boolean } {
  const fit = Math.min(MOST_COLUMNS, Math.floor((width + GAP) / (CARD_WIDTH + GAP)));
  const most = fit >= 2 ? fit : (width - GAP) / 2 >= NARROW_CARD_WIDTH ? 2 : 1;
  if (count <= most) return { columns: Math.max(count, 1), spanLast: false };
  let best = 0;
  for (let columns = 2; columns <= most; columns++) {
    if (count % columns === 1) continue;
    if (!best || Math.ceil(count / columns) < Math.ceil(count / best)) best = columns;
  }
  if (best) return { columns: best, spanLast: false };
  return { columns: most, spanLast: most > 1 };
}

/** Figures as a grid of cards laid out for their number and the width they have. */
export function Cards({ label, figures }: { label: string; figures: readonly Figure[] }) {
  const list = useRef<HTMLUListElement>(null);
  const width = useWidth(list);
  const layout = width === null ? null : cardColumns(figures.length, width);
  const classes = ['cards', layout && `columns-${layout.columns}`, layout?.spanLast && 'span-last'];
  return (
    <ul ref={list} class={classes.filter(Boolean).join(' ')} aria-label={label}>
      {figures.map((figure) => (
        <li key={figure.title} class="card">
          <span class="card-title">{figure.title}</span>
          <span class="card-value">{figure.value}</span>
          {figure.note && <span class="muted">{figure.note}</span>}
          {figure.compare}
        </li>
      ))}
    </ul>
  );
}
