import { api } from '../api';
import { type Figure, Cards as FigureCards } from '../components/cards';
import { Chart } from '../components/chart';
import { EmptyState } from '../components/create-panel';
import { ListTable } from '../components/list';
import { Loading, Page, Section, StatusBadge } from '../components/page';
import {
  type PeriodChoice,
  PeriodPicker,
  periodFromUrl,
  periodPhrase,
  periodQuery,
  periodWords,
} from '../components/period';
import { useLoad } from '../components/use-api';
import {
  formatChange,
  formatDate,
  formatDateTime,
  formatMoney,
  formatNumber,
  formatSignedMoney,
  formatSignedNumber,
  noun,
  plural,
  words,
} from '../format';
import { href, queryOf, useHashPath } from '../router';
import type { CurrencyRevenue, Overview } from '../types';

/** "Mar 2" along a daily chart's bottom, "Mar 2026" in full. */
const day = (start: string) =>
  new Date(start).toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
const month = (start: string) =>
  new Date(start).toLocaleDateString(undefined, { month: 'short', year: 'numeric', timeZone: 'UTC' });
const monthShort = (start: string) =>
  new Date(start).toLocaleDateString(undefined, { month: 'short', timeZone: 'UTC' });

/**
 * The first page after sign-in: the seller's own figures (GET /v1/overview) over the period in
 * the URL (the last 30 days by default), each beside its value in the period before.
 */
export function OverviewPage() {
  const choice = periodFromUrl(queryOf(useHashPath()));
  const query = periodQuery(choice, new Date());
  // The answer keeps the period it was asked for: until the next one arrives, the figures on
  // screen are still titled with their own period.
  const overview = useLoad(
    async () => ({ data: await api.get<Overview>('/overview', query), choice }),
    JSON.stringify(['overview', query]),
  );
  return (
    <Page title="Overview">
      <PeriodPicker choice={choice} shown={overview.data?.data.period} error={overview.error} />
      <div aria-busy={overview.loading}>
        <Loading state={overview}>
          {(shown) => <OverviewBody data={shown.data} choice={shown.choice} />}
        </Loading>
      </div>
    </Page>
  );
}

function OverviewBody({ data, choice }: { data: Overview; choice: PeriodChoice }) {
  const nothingYet =
    data.licenses.total === 0 &&
    data.orders.latest.length === 0 &&
    data.revenue.last12Months.series.length === 0;
  const { period } = data;
  const during = periodWords(choice, period);
  const activity = period.activity;
  return (
    <>
      {nothingYet && (
        <EmptyState
          title="Nothing to show yet"
          action={
            <>
              <a class="button primary" href={href('/apps')}>
                Create an app
              </a>
              <a class="button secondary" href={href('/products/new')}>
                Create a product
              </a>
            </>
          }
        >
          Sales, licenses and verifications appear here. Start with an app (your software), then a product
          that sells its licenses through checkout.
        </EmptyState>
      )}
      <p class="muted">
        Figures {periodPhrase(choice, period)} (UTC), each beside the {plural(period.days, 'day', 'days')}{' '}
        before; licenses, webhooks and disputes as they are now.
      </p>
      <Cards data={data} choice={choice} />
      <Section title="Revenue">
        {period.revenue.length === 0 && data.revenue.last12Months.series.length === 0 ? (
          <p>No sales in the last 12 months. Paid orders appear here per currency.</p>
        ) : (
          <>
            {period.revenue.length === 0 && <p>No sales {periodPhrase(choice, period)}.</p>}
            <div class="charts">
              {period.revenue.map((series) => (
                <RevenueChart key={`d-${series.currency}`} series={series} period={during} daily />
              ))}
              {data.revenue.last12Months.series.map((series) => (
                <RevenueChart key={`m-${series.currency}`} series={series} period="last 12 months" />
              ))}
            </div>
          </>
        )}
      </Section>
      <Section title="Verifications and activations">
        <div class="charts">
          <Chart
            kind="bar"
            unit="count"
            title={`Verifications per day, ${during} (${formatNumber(activity.totals.valid)} valid, ${formatNumber(activity.totals.invalid)} invalid)`}
            labels={activity.points.map((p) => formatDate(p.start))}
            axisLabels={activity.points.map((p) => day(p.start))}
            series={[
              { name: 'Valid', values: activity.points.map((p) => p.valid) },
              { name: 'Invalid', values: activity.points.map((p) => p.invalid) },
            ]}
            format={formatNumber}
          />
          <Chart
            kind="bar"
            unit="count"
            title={`New device activations per day, ${during} (${formatNumber(activity.totals.activations)})`}
            labels={activity.points.map((p) => formatDate(p.start))}
            axisLabels={activity.points.map((p) => day(p.start))}
            series={[{ name: 'Activations', values: activity.points.map((p) => p.activations) }]}
            format={formatNumber}
          />
        </div>
        <p class="muted">Verification counts arrive within a few seconds of the verifications.</p>
      </Section>
      <Section title="Webhooks needing attention">
        {data.webhooks.endpoints.length === 0 ? (
          <p>All webhook endpoints are delivering.</p>
        ) : (
          <ListTable
            caption="Webhook endpoints failing or disabled"
            rows={data.webhooks.endpoints}
            columns={[
              {
                title: 'Endpoint',
                cell: (endpoint) => (
                  <a
                    class="break"
                    href={href(
                      endpoint.kind === 'merchant' && endpoint.productId
                        ? `/products/${endpoint.productId}`
                        : `/webhooks/${endpoint.id}`,
                    )}
                  >
                    {endpoint.url}
                  </a>
                ),
              },
              { title: 'State', cell: (endpoint) => <StatusBadge status={endpoint.status} /> },
              {
                title: 'Why',
                cell: (endpoint) =>
                  endpoint.status === 'disabled'
                    ? (endpoint.disabledReason ?? 'Disabled')
                    : `${plural(endpoint.consecutiveFailures, 'failed delivery', 'failed deliveries')} since ${formatDateTime(endpoint.failingSince)}`,
              },
            ]}
          />
        )}
      </Section>
      <Section title="Open disputes">
        {data.disputes.latest.length === 0 ? (
          <p>No open disputes.</p>
        ) : (
          <>
            <ListTable
              caption="Open disputes"
              rows={data.disputes.latest}
              columns={[
                {
                  title: 'Amount',
                  cell: (dispute) => (
                    <a href={href(`/disputes/${dispute.id}`)}>
                      {formatMoney(dispute.amount, dispute.currency)}
                    </a>
                  ),
                },
                { title: 'Status', cell: (dispute) => <StatusBadge status={dispute.status} /> },
                { title: 'Reason', cell: (dispute) => words(dispute.reason) || '—' },
                { title: 'Evidence due', cell: (dispute) => formatDateTime(dispute.evidenceDueBy) },
              ]}
            />
            <p>
              <a href={href('/disputes')}>All disputes ({formatNumber(data.disputes.open)} open)</a>
            </p>
          </>
        )}
      </Section>
      <Section title="Latest orders">
        {data.orders.latest.length === 0 ? (
          <p>No orders yet. They appear here when buyers pay through checkout.</p>
        ) : (
          <>
            <ListTable
              caption="Latest orders"
              rows={data.orders.latest}
              columns={[
                {
                  title: 'Amount',
                  cell: (order) => (
                    <a href={href(`/orders/${order.id}`)}>{formatMoney(order.amount, order.currency)}</a>
                  ),
                },
                { title: 'Product', cell: (order) => order.productName },
                { title: 'Buyer', cell: (order) => <span class="break">{order.email}</span> },
                { title: 'Status', cell: (order) => <StatusBadge status={order.status} /> },
                { title: 'Created', cell: (order) => formatDateTime(order.createdAt) },
              ]}
            />
            <p>
              <a href={href('/orders')}>All orders</a>
            </p>
          </>
        )}
      </Section>
      <p class="muted">As of {formatDateTime(data.generatedAt)}.</p>
    </>
  );
}

/** How a period figure compares with the period before: its value then, and the change. */
function Compare({
  current,
  previous,
  days,
  format,
  signed,
}: {
  current: number;
  previous: number;
  days: number;
  format(value: number): string;
  signed(value: number): string;
}) {
  return (
    <span class="card-compare">
      <span class="card-previous">
        Previous {plural(days, 'day', 'days')}: {format(previous)}
      </span>{' '}
      <span class="card-change">{formatChange(current, previous, signed)}</span>
    </span>
  );
}

/**
 * The figures: revenue per currency (any currency sold in the period or the one before),
 * verifications and activations over the period, each compared with the period before; then
 * licenses, webhooks and disputes as they stand now.
 */
function Cards({ data, choice }: { data: Overview; choice: PeriodChoice }) {
  const { period, licenses, webhooks, disputes } = data;
  const { previous, days } = period;
  const during = choice.kind === 'preset' ? `${choice.days} days` : periodWords(choice, period);
  const currencies = [
    ...new Set([...period.revenue.map((s) => s.currency), ...previous.revenue.map((s) => s.currency)]),
  ].sort();
  const verified = (totals: { valid: number; invalid: number }) => totals.valid + totals.invalid;
  const troubled = webhooks.failing + webhooks.disabled;
  const figures: Figure[] = [
    ...currencies.map((currency): Figure => {
      const now = period.revenue.find((s) => s.currency === currency) ?? { amount: 0, orders: 0 };
      const before = previous.revenue.find((s) => s.currency === currency)?.amount ?? 0;
      return {
        title: `Revenue in ${currency}, ${during}`,
        value: formatMoney(now.amount, currency),
        note: plural(now.orders, 'paid order', 'paid orders'),
        compare: (
          <Compare
            current={now.amount}
            previous={before}
            days={days}
            format={(value) => formatMoney(value, currency)}
            signed={(value) => formatSignedMoney(value, currency)}
          />
        ),
      };
    }),
    {
      title: 'Active licenses',
      value: formatNumber(licenses.byStatus.active),
      note: `of ${formatNumber(licenses.total)} · ${formatNumber(licenses.byStatus.suspended)} suspended`,
    },
    {
      title: `Verifications, ${during}`,
      value: formatNumber(verified(period.activity.totals)),
      note: `${formatNumber(period.activity.totals.valid)} valid · ${formatNumber(period.activity.totals.invalid)} invalid`,
      compare: (
        <Compare
          current={verified(period.activity.totals)}
          previous={verified(previous.activity)}
          days={days}
          format={formatNumber}
          signed={formatSignedNumber}
        />
      ),
    },
    {
      title: `New activations, ${during}`,
      value: formatNumber(period.activity.totals.activations),
      note: noun(
        period.activity.totals.activations,
        'device bound to a license',
        'devices bound to licenses',
      ),
      compare: (
        <Compare
          current={period.activity.totals.activations}
          previous={previous.activity.activations}
          days={days}
          format={formatNumber}
          signed={formatSignedNumber}
        />
      ),
    },
    {
      title: 'Webhooks needing attention',
      value: formatNumber(troubled),
      note: `${formatNumber(webhooks.failing)} failing · ${formatNumber(webhooks.disabled)} disabled`,
    },
    {
      title: 'Open disputes',
      value: formatNumber(disputes.open),
      note: disputes.open ? 'waiting for you or the card partner' : '',
    },
  ];
  return <FigureCards label="Figures" figures={figures} />;
}

function RevenueChart({
  series,
  period,
  daily,
}: {
  series: CurrencyRevenue;
  period: string;
  daily?: boolean;
}) {
  return (
    <Chart
      kind="bar"
      unit="amount"
      title={`Revenue in ${series.currency}, ${period} (${formatMoney(series.amount, series.currency)} from ${plural(series.orders, 'paid order', 'paid orders')})`}
      labels={series.points.map((p) => (daily ? formatDate(p.start) : month(p.start)))}
      axisLabels={series.points.map((p) => (daily ? day(p.start) : monthShort(p.start)))}
      series={[{ name: `Revenue (${series.currency})`, values: series.points.map((p) => p.amount) }]}
      format={(value) => formatMoney(value, series.currency)}
    />
  );
}
