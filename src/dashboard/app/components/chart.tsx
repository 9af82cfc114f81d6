import { useId } from 'preact/hooks';

/**
 * Small SVG charts instead of a chart library: a few dozen lines draw bars and lines with their
 * axes, the SVG is a labelled image to assistive technology, and the same numbers are one click
 * away as a table. No canvas (nothing to read) and nothing to download.
 */

export interface ChartSeries {
  name: string;
  values: number[];
}

interface ChartProps {
  title: string;
  kind: 'bar' | 'line';
  /** One label per point, in the table and the description. */
  labels: string[];
  /** Shorter labels for along the bottom (the labels themselves when absent). */
  axisLabels?: string[];
  series: ChartSeries[];
  format?(value: number): string;
}

const WIDTH = 520;
const HEIGHT = 240;
const PAD = { top: 12, right: 16, bottom: 36, left: 72 };

/** A round number at or above `max` (1, 2 or 5 times a power of ten), so the axis reads well. */
function niceCeiling(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  const step = [1, 2, 5, 10].find((m) => m * power >= max) ?? 10;
  return step * power;
}

export function Chart({ title, kind, labels, axisLabels = labels, series, format = String }: ChartProps) {
  const id = useId();
  const top = niceCeiling(Math.max(0, ...series.flatMap((s) => s.values)));
  const plotWidth = WIDTH - PAD.left - PAD.right;
  const plotHeight = HEIGHT - PAD.top - PAD.bottom;
  const count = Math.max(labels.length, 1);
  const slot = plotWidth / count;
  const x = (index: number) => PAD.left + slot * index + slot / 2;
  const y = (value: number) => PAD.top + plotHeight - (value / top) * plotHeight;
  const ticks = [0, top / 2, top];
  // At most about six labels along the bottom (three on a phone, where the chart is drawn
  // smaller and its type larger): the first, the last, and evenly between them where they do
  // not crowd the last one. The stylesheet shows one set or the other.
  const last = labels.length - 1;
  const labelsAtMost = (most: number) => {
    const every = Math.max(1, Math.ceil(labels.length / most));
    return axisLabels.map((label, index) =>
      index === last || (index % every === 0 && last - index >= every / 2) ? label : null,
    );
  };
  const axisSets: [string, (string | null)[]][] = [
    ['axis-label wide', labelsAtMost(6)],
    ['axis-label narrow', labelsAtMost(3)],
  ];
  const barWidth = Math.max(2, (slot * 0.8) / Math.max(series.length, 1));
  const summary = series
    .map(
      (s) =>
        `${s.name}: total ${format(s.values.reduce((a, b) => a + b, 0))}, highest ${format(Math.max(0, ...s.values))}`,
    )
    .join('; ');

  return (
    <figure class="chart">
      <figcaption id={`${id}-caption`}>{title}</figcaption>
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        role="img"
        aria-labelledby={`${id}-title ${id}-desc`}
        preserveAspectRatio="xMidYMid meet"
      >
        <title id={`${id}-title`}>{title}</title>
        <desc id={`${id}-desc`}>
          {labels.length === 0
            ? 'No data in this range.'
            : `${labels.length} points from ${labels[0]} to ${labels[labels.length - 1]}. ${summary}.`}
        </desc>
        {ticks.map((tick) => (
          <g key={tick} class="tick">
            <line x1={PAD.left} x2={WIDTH - PAD.right} y1={y(tick)} y2={y(tick)} class="grid" />
            <text x={PAD.left - 6} y={y(tick) + 4} text-anchor="end" class="axis-label">
              {format(tick)}
            </text>
          </g>
        ))}
        {axisSets.map(([className, shown]) =>
          shown.map((label, index) =>
            label === null ? null : (
              // The last label ends at the plot's edge rather than running past it.
              <text
                key={`${className}-${index}`}
                x={index === last && index > 0 ? x(index) + slot / 2 : x(index)}
                y={HEIGHT - PAD.bottom + 18}
                text-anchor={index === last && index > 0 ? 'end' : 'middle'}
                class={className}
              >
                {label}
              </text>
            ),
          ),
        )}
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
              {s.values.map((value, index) => (
                <circle key={labels[index]} cx={x(index)} cy={y(value)} r={3} />
              ))}
            </g>
          ),
        )}
        <line x1={PAD.left} x2={WIDTH - PAD.right} y1={y(0)} y2={y(0)} class="axis" />
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
