import type { Executor } from '../../platform/db/database.js';
import type { ReleaseRow } from '../../platform/db/schema.js';
import { iso } from '../../platform/http/schemas.js';
import { overviewPeriod } from '../analytics/index.js';
import * as store from './store.js';

const DAY_MS = 86_400_000;

/**
 * A release's downloads per UTC day over a period chosen as the seller overview's is (the days
 * from the one holding `from` to the one holding `to`; by default today and the 29 before; at
 * most 366), for the release and for each of its artifacts. Every day is present, zero when none.
 */
export async function releaseDownloads(
  executor: Executor,
  release: ReleaseRow,
  query: { from?: string; to?: string },
  now: Date,
) {
  const period = overviewPeriod(query, now);
  const days = Array.from({ length: period.days }, (_, index) =>
    iso(new Date(period.first.getTime() + index * DAY_MS)).slice(0, 10),
  );
  const first = days[0] as string;
  const last = days[days.length - 1] as string;
  const [artifacts, counted] = await Promise.all([
    store.listArtifacts(executor, release.id),
    store.downloadDays(executor, release.id, first, last),
  ]);
  const countOf = new Map(counted.map((row) => [`${row.artifact_id} ${row.day}`, Number(row.downloads)]));
  const perArtifact = artifacts.map((artifact) => {
    const values = days.map((day) => countOf.get(`${artifact.id} ${day}`) ?? 0);
    return {
      id: artifact.id,
      filename: artifact.filename,
      platform: artifact.platform || null,
      arch: artifact.arch || null,
      downloads: sum(values),
      points: days.map((day, index) => ({ start: `${day}T00:00:00.000Z`, downloads: values[index] ?? 0 })),
    };
  });
  const points = days.map((day, index) => ({
    start: `${day}T00:00:00.000Z`,
    downloads: sum(perArtifact.map((artifact) => artifact.points[index]?.downloads ?? 0)),
  }));
  return {
    releaseId: release.id,
    from: iso(period.first),
    to: iso(period.range.to),
    days: period.days,
    downloads: sum(points.map((point) => point.downloads)),
    points,
    artifacts: perArtifact,
  };
}

const sum = (values: readonly number[]) => values.reduce((total, value) => total + value, 0);
