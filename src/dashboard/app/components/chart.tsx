import { useId, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { plural } from '../format';
import { useWidth } from './use-width';

/**
 * Small SVG charts instead of a chart library: a few dozen lines draw bars and lines with their
 * axes, the SVG is a labelled image to assistive technology, and the same numbers are one click
 * away as a table. Nothing is painted on a canvas (nothing to read) and nothing is downloaded.
 *
 * A chart is drawn for the width its figure has on screen (one SVG unit is one CSS pixel), so
 * its type keeps one size; the labels along the bottom are measured and thinned out until no two
 * come closer than LABEL_GAP, whatever the width and however many points there are.
 */

export interface ChartSeries {
  name: string;
  values: number[];
}

interface ChartProps {
  title: string;
  kind: 'bar' | 'line';
  /** Counts (verifications, users) mark whole numbers only up the side; amounts may mark 2.5. */
  unit: 'count' | 'amount';
  /** One label per point, in the table and the description. */
  labels: string[];
  /** Shorter labels for along the bottom (the labels themselves when absent). */
  axisLabels?: string[];
  series: ChartSeries[];
  format?(value: number): string;
}

/** The width drawn for until the figure has been laid out; the SVG scales to it meanwhile. */
const DEFAULT_WIDTH = 520;
const HEIGHT = 240;
const PAD = { top: 12, right: 4, bottom: 36 };
/** The least room between two labels along the bottom. */
const LABEL_GAP = 12;
/** Room between the values up the side and the plot. */
const TICK_GAP = 6;
/** About as many steps up the side, fewer when the values are small counts. */
const TICK_STEPS = 4;

/**
 * The values marked up the side: 0, then steps of 1, 2 or 5 times a power of ten up to the first
 * at or above `max`. Counts step by whole numbers (at least 1), so no tick reads "0.5 users".
 */
function axisTicks(max: number, unit: 'count' | 'amount'): number[] {
  if (!(max > 0)) return [0, 1];
  const rough = max / TICK_STEPS;
  const power = 10 ** Math.floor(Math.log10(rough));
  let step = ([1, 2, 5, 10].find((m) => m * power >= rough) ?? 10) * power;
  if (unit === 'count') step = Math.max(1, Math.round(step));
  const steps = Math.ceil(max / step - 1e-9);
  return Array.from({ length: steps + 1 }, (_, index) => Number((index * step).toPrecision(12)));
}

/**
 * Which points are named along the bottom, and where: every `step`-th point counting back from
 * the last (the latest is always named), each label kept between `left` and `right`, with the
 * smallest step at which every label stands at least LABEL_GAP clear of the next.
 */
function placeAxisLabels(
  centres: readonly number[],
  widths: readonly number[],
  left: number,
  right: number,
): { index: number; x: number }[] {
  const last = centres.length - 1;
  const widthOf = (index: number) => widths[index] ?? 0;
  const place = (index: number) => {
    const half = widthOf(index) / 2;
    return { index, x: Math.max(left + half, Math.min(right - half, centres[index] ?? 0)) };
  };
  for (let step = 1; step <= last; step++) {
    const placed: { index: number; x: number }[] = [];
    for (let index = last % step; index <= last; index += step) placed.push(place(index));
    const clear = placed.every((label, at) => {
      const before = placed[at - 1];
      return (
        !before || before.x + widthOf(before.index) / 2 + LABEL_GAP <= label.x - widthOf(label.index) / 2
      );
    });
    if (clear) return placed;
  }
  return last >= 0 ? [place(last)] : [];
}

/** An offscreen canvas's 2D context, used only to measure text; never drawn on or shown. */
let measuringContext: CanvasRenderingContext2D | null | undefined;

/** How wide each text is in the font the element's text is drawn in; null if it cannot be told. */
function measureTexts(element: Element, texts: readonly string[]): Map<string, number> | null {
  measuringContext ??= document.createElement('canvas').getContext('2d');
  if (!measuringContext) return null;
  const style = getComputedStyle(element);
  measuringContext.font = `${style.fontStyle} ${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
  return new Map(texts.map((text) => [text, measuringContext?.measureText(text).width ?? 0]));
}

/** Until measured, a generous guess: 8 px a character is wider than the axis type's digits and letters. */
const guessWidth = (text: string) => text.length * 8;

export function Chart({
  title,
  kind,
  unit,
  labels,
  axisLabels = labels,
  series,
  format = String,
}: ChartProps) {
  const id = useId();
  const figure = useRef<HTMLElement>(null);
  const svg = useRef<SVGSVGElement>(null);
  const width = useWidth(figure) ?? DEFAULT_WIDTH;
  const ticks = axisTicks(Math.max(0, ...series.flatMap((s) => s.values)), unit);
  const top = ticks[ticks.length - 1] ?? 1;
  const tickTexts = ticks.map((tick) => format(tick));
  const texts = [...new Set([...tickTexts, ...axisLabels])];
  const textsKey = JSON.stringify(texts);
  const [measured, setMeasured] = useState<{ key: string; widths: Map<string, number> } | null>(null);
  useLayoutEffect(() => {
    const sample = svg.current?.querySelector('text.axis-label');
    const widths = sample ? measureTexts(sample, texts) : null;
    if (widths) setMeasured({ key: textsKey, widths });
  }, [textsKey]);
  const textWidth = (text: string) =>
    (measured?.key === textsKey ? measured.widths.get(text) : undefined) ?? guessWidth(text);

  const padLeft = Math.ceil(Math.max(...tickTexts.map(textWidth))) + TICK_GAP + 2;
  const plotWidth = Math.max(1, width - padLeft - PAD.right);
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const count = Math.max(labels.length, 1);
  const slot = plotWidth / count;
  const x = (index: number) => padLeft + slot * index + slot / 2;
  const y = (value: number) => PAD.top + plotHeight - (value / top) * plotHeight;
  const placed = placeAxisLabels(
    axisLabels.map((_, index) => x(index)),
    axisLabels.map(textWidth),
    padLeft,
    width - 1,
  );
  const barWidth = Math.max(1, (slot * 0.8) / Math.max(series.length, 1));
  const summary = series
    .map(
      (s) =>
        `${s.name}: total ${format(s.values.reduce((a, b) => a + b, 0))}, highest ${format(Math.max(0, ...s.values))}`,
    )
    .join('; ');

  return (
    <figure class="chart" ref={figure}>
      <figcaption id={`${id}-caption`}>{title}</figcaption>
      <svg
        ref={svg}
        viewBox={`0 0 ${width} ${HEIGHT}`}
        role="img"
        aria-labelledby={`${id}-title ${id}-desc`}
        preserveAspectRatio="xMidYMid meet"
      >
        <title id={`${id}-title`}>{title}</title>
        <desc id={`${id}-desc`}>
          {labels.length === 0
            ? 'No data in this range.'
            : `${plural(labels.length, 'point', 'points')} from ${labels[0]} to ${labels[labels.length - 1]}. ${summary}.`}
        </desc>
        {ticks.map((tick, index) => (
          <g key={tick} class="tick">
            <line x1={padLeft} x2={width - PAD.right} y1={y(tick)} y2={y(tick)} class="grid" />
            <text x={padLeft - TICK_GAP} y={y(tick) + 4} text-anchor="end" class="axis-label value">
              {tickTexts[index]}
            </text>
          </g>
        ))}
        {placed.map(({ index, x: at }) => (
          <text key={index} x={at} y={HEIGHT - PAD.bottom + 18} text-anchor="middle" class="axis-label point">
            {axisLabels[index]}
          </text>
        ))}
        {series.map((s, seriesIndex) =>
          kind === 'bar' ? (
            <g key={s.name} class={`series series-${seriesIndex}`}>
              {s.values.map((value, index) => (
                <rect
                  key={labels[index]}
                  x={x(index) - (barWidth * series.length) / 2 + barWidth * seriesIndex}
                  y={y(value)}
                  width={barWidth}
                  height={Math.max(0, y(0) - y(value))}
                />
              ))}
            </g>
          ) : (
            <g key={s.name} class={`series series-${seriesIndex}`}>
              <polyline
                fill="none"
                points={s.values.map((value, index) => `${x(index)},${y(value)}`).join(' ')}
              />
              {/* Dots only where there is room for them: 90 days on a phone are a line. */}
              {slot >= 8 &&
                s.values.map((value, index) => (
                  <circle key={labels[index]} cx={x(index)} cy={y(value)} r={3} />
                ))}
            </g>
          ),
        )}
        <line x1={padLeft} x2={width - PAD.right} y1={y(0)} y2={y(0)} class="axis" />
      </svg>
      {series.length > 1 && (
        <ul class="legend" aria-hidden="true">
          {series.map((s, index) => (
            <li key={s.name}>
              <span class={`swatch series-${index}`} />
              {s.name}
            </li>
          ))}
        </ul>
      )}
      <details>
        <summary>Show the data of “{title}” as a table</summary>
        <div class="table-scroll">
          <table>
            <caption class="visually-hidden">{title}</caption>
            <thead>
              <tr>
                <th scope="col">Period</th>
                {series.map((s) => (
                  <th key={s.name} scope="col">
                    {s.name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {labels.map((label, index) => (
                <tr key={label}>
                  <th scope="row">{label}</th>
                  {series.map((s) => (
                    <td key={s.name}>{format(s.values[index] ?? 0)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
