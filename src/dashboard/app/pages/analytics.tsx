import { useState } from 'preact/hooks';
import { api } from '../api';
import { Cards, type Figure } from '../components/cards';
import { Chart } from '../components/chart';
import { Form, SelectField, TextField } from '../components/form';
import { Loading, Page, Section } from '../components/page';
import { useLoad } from '../components/use-api';
import { formatDate, formatDateTime, formatMoney, formatNumber, plural } from '../format';
import type { Interval, LicenseSeries, RevenueSeries, Stats, UserSeries } from '../types';

const DAY = 24 * 60 * 60 * 1000;

interface Range {
  from: string;
  to: string;
  interval: Interval;
}

function defaultRange(): Range {
  const today = new Date();
  return {
    from: new Date(today.getTime() - 29 * DAY).toISOString().slice(0, 10),
    to: today.toISOString().slice(0, 10),
    interval: 'day',
  };
}

/** The range as the analytics routes take it: from the start of the first day to the end of the last (UTC). */
function rangeQuery(range: Range) {
  return {
    from: `${range.from}T00:00:00.000Z`,
    to: `${range.to}T23:59:59.999Z`,
    interval: range.interval,
  };
}

const label = (start: string, interval: Interval) =>
  interval === 'month' ? start.slice(0, 7) : formatDate(start);

/** Along a chart's bottom: "Nov 21" for days and weeks, "2026-11" for months. */
const axisLabel = (start: string, interval: Interval) =>
  interval === 'month'
    ? start.slice(0, 7)
    : new Date(start).toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });

export function AnalyticsPage() {
  const stats = useLoad(() => api.get<Stats>('/analytics/stats'), 'stats');
  const [draft, setDraft] = useState(defaultRange);
  const [range, setRange] = useState(draft);
  return (
    <Page title="Analytics">
      <p class="muted">The whole service, all sellers. Only administrators see this page.</p>
      <Loading state={stats}>{(s) => <StatCards stats={s} />}</Loading>
      <Section title="Over time">
        <Form label="Range of the charts" class="form filters" onSubmit={() => setRange(draft)}>
          <TextField
            label="From"
            name="from"
            type="date"
            value={draft.from}
            onValue={(from) => setDraft({ ...draft, from })}
          />
          <TextField
            label="To"
            name="to"
            type="date"
            value={draft.to}
            onValue={(to) => setDraft({ ...draft, to })}
          />
          <SelectField
            label="Interval"
            name="interval"
            value={draft.interval}
            options={[
              { value: 'day', label: 'Day' },
              { value: 'week', label: 'Week' },
              { value: 'month', label: 'Month' },
            ]}
            onValue={(interval) => setDraft({ ...draft, interval: interval as Interval })}
          />
          <div class="actions">
            <button type="submit" class="primary">
              Show
            </button>
          </div>
        </Form>
        <Trends range={range} />
      </Section>
    </Page>
  );
}

function StatCards({ stats }: { stats: Stats }) {
  const verified = stats.licenses.verificationsLast30Days;
  const figures: Figure[] = [
    {
      title: 'Users',
      value: formatNumber(stats.users.total),
      note: `${plural(stats.users.byRole.ADMIN, 'admin', 'admins')} · ${formatNumber(stats.users.byTier.enterprise)} enterprise`,
    },
    { title: 'Apps', value: formatNumber(stats.apps.total) },
    {
      title: 'Products',
      value: formatNumber(stats.products.total),
      note: `${formatNumber(stats.products.active)} active`,
    },
    {
      title: 'Licenses',
      value: formatNumber(stats.licenses.total),
      note: `${formatNumber(stats.licenses.byStatus.active)} active · ${formatNumber(stats.licenses.byStatus.suspended)} suspended · ${formatNumber(stats.licenses.byStatus.revoked)} revoked`,
    },
    {
      title: 'Verifications (30 days)',
      value: formatNumber(verified.valid + verified.invalid),
      note: `${formatNumber(verified.valid)} valid · ${formatNumber(verified.invalid)} invalid`,
    },
    {
      title: 'Orders',
      value: formatNumber(stats.orders.total),
      note: `${formatNumber(stats.orders.byStatus.paid ?? 0)} paid`,
    },
    {
      title: 'Subscriptions',
      value: formatNumber(stats.subscriptions.total),
      note: `${formatNumber(stats.subscriptions.byStatus.active ?? 0)} active`,
    },
    {
      title: 'Disputes',
      value: formatNumber(stats.disputes.total),
      note: `${formatNumber(stats.disputes.open)} open`,
    },
    ...stats.revenue.map(
      (r): Figure => ({
        title: `Revenue in ${r.currency}`,
        value: formatMoney(r.amount, r.currency),
        note: plural(r.orders, 'paid order', 'paid orders'),
      }),
    ),
  ];
  return (
    <Section title="Totals">
      <Cards label="Totals" figures={figures} />
      <p class="muted">As of {formatDateTime(stats.generatedAt)}.</p>
    </Section>
  );
}

function Trends({ range }: { range: Range }) {
  const query = rangeQuery(range);
  const data = useLoad(async () => {
    const [revenue, licenses, users] = await Promise.all([
      api.get<RevenueSeries>('/analytics/revenue', query),
      api.get<LicenseSeries>('/analytics/licenses', query),
      api.get<UserSeries>('/analytics/users', query),
    ]);
    return { revenue, licenses, users };
  }, JSON.stringify(query));
  return (
    <Loading state={data}>
      {({ revenue, licenses, users }) => (
        <div class="charts">
          {revenue.series.length === 0 ? (
            <p>No revenue in this range.</p>
          ) : (
            revenue.series.map((series) => (
              <Chart
                key={series.currency}
                kind="bar"
                unit="amount"
                title={`Revenue in ${series.currency} (${formatMoney(series.amount, series.currency)} from ${plural(series.orders, 'paid order', 'paid orders')})`}
                labels={series.points.map((p) => label(p.start, revenue.interval))}
                axisLabels={series.points.map((p) => axisLabel(p.start, revenue.interval))}
                series={[
                  { name: `Revenue (${series.currency})`, values: series.points.map((p) => p.amount) },
                ]}
                format={(value) => formatMoney(value, series.currency)}
              />
            ))
          )}
          <Chart
            kind="line"
            unit="count"
            title="Licenses"
            labels={licenses.points.map((p) => label(p.start, licenses.interval))}
            axisLabels={licenses.points.map((p) => axisLabel(p.start, licenses.interval))}
            series={[
              { name: 'Issued', values: licenses.points.map((p) => p.issued) },
              { name: 'Suspended', values: licenses.points.map((p) => p.suspended) },
              { name: 'Revoked', values: licenses.points.map((p) => p.revoked) },
              { name: 'Expired', values: licenses.points.map((p) => p.expired) },
            ]}
            format={formatNumber}
          />
          {/* Its own chart: the standing count dwarfs the per-bucket movements above. */}
          <Chart
            kind="line"
            unit="count"
            title="Active licenses"
            labels={licenses.points.map((p) => label(p.start, licenses.interval))}
            axisLabels={licenses.points.map((p) => axisLabel(p.start, licenses.interval))}
            series={[{ name: 'Active at the end', values: licenses.points.map((p) => p.active) }]}
            format={formatNumber}
          />
          <Chart
            kind="bar"
            unit="count"
            title="Verifications"
            labels={licenses.points.map((p) => label(p.start, licenses.interval))}
            axisLabels={licenses.points.map((p) => axisLabel(p.start, licenses.interval))}
            series={[
              { name: 'Valid', values: licenses.points.map((p) => p.verifications.valid) },
              { name: 'Invalid', values: licenses.points.map((p) => p.verifications.invalid) },
            ]}
            format={formatNumber}
          />
          <Chart
            kind="bar"
            unit="count"
            title="New users"
            labels={users.points.map((p) => label(p.start, users.interval))}
            axisLabels={users.points.map((p) => axisLabel(p.start, users.interval))}
            series={[{ name: 'Registrations', values: users.points.map((p) => p.registrations) }]}
            format={formatNumber}
          />
          <Chart
            kind="line"
            unit="count"
            title="Users in total"
            labels={users.points.map((p) => label(p.start, users.interval))}
            axisLabels={users.points.map((p) => axisLabel(p.start, users.interval))}
            series={[{ name: 'Users', values: users.points.map((p) => p.total) }]}
            format={formatNumber}
          />
        </div>
      )}
    </Loading>
  );
}
