import { api } from '../api';
import { Chart } from '../components/chart';
import { ListTable } from '../components/list';
import { Loading, Section } from '../components/page';
import { useLoad } from '../components/use-api';
import { formatDate, formatNumber } from '../format';
import type { Release, ReleaseDownloads } from '../types';

/** "Mar 2" along the chart's bottom. */
const day = (start: string) =>
  new Date(start).toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });

type FileDownloads = ReleaseDownloads['artifacts'][number];

/**
 * A published (or yanked) release's downloads over the last 30 UTC days: a bar a day for the
 * release, and each file's count in those days. (A draft is downloaded by no one: its page has
 * no such section.)
 */
export function Downloads({ release, base }: { release: Release; base: string }) {
  const downloads = useLoad(
    () => api.get<ReleaseDownloads>(`${base}/downloads`),
    `${base}:downloads:${release.updatedAt}`,
  );
  return (
    <Section title="Downloads">
      <Loading state={downloads}>
        {(loaded) => (
          <>
            <div class="charts">
              <Chart
                kind="bar"
                unit="count"
                title={`Downloads per day, last ${loaded.days} days (${formatNumber(loaded.downloads)})`}
                labels={loaded.points.map((point) => formatDate(point.start))}
                axisLabels={loaded.points.map((point) => day(point.start))}
                series={[{ name: 'Downloads', values: loaded.points.map((point) => point.downloads) }]}
                format={formatNumber}
              />
            </div>
            <ListTable<FileDownloads>
              caption={`Downloads per file, last ${loaded.days} days`}
              rows={loaded.artifacts}
              empty={<p>This release has no file.</p>}
              columns={[
                { title: 'File', cell: (file) => <span class="break">{file.filename}</span> },
                { title: 'Platform', cell: (file) => file.platform ?? 'Every platform' },
                { title: 'Architecture', cell: (file) => file.arch ?? 'Every architecture' },
                {
                  title: `Last ${loaded.days} days`,
                  card: 'figure',
                  cell: (file) => formatNumber(file.downloads),
                },
              ]}
            />
            <p class="muted">
              Days are UTC. A download counts once, on the day it started, however often it was resumed.
            </p>
          </>
        )}
      </Loading>
    </Section>
  );
}
