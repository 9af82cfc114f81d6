import { api } from '../api';
import { Chart } from '../components/chart';
import { EmptyState } from '../components/create-panel';
import { ListTable } from '../components/list';
import { Loading, Page, Section, StatusBadge } from '../components/page';
import { useLoad } from '../components/use-api';
import { formatDate, formatDateTime, formatMoney, formatNumber, words } from '../format';
import { href } from '../router';
import type { CurrencyRevenue, Overview } from '../types';

/** "Mar 2" along a daily chart's bottom, "Mar 2026" in full. */
const day = (start: string) =>
  new Date(start).toLocaleDateString(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
const month = (start: string) =>
  new Date(start).toLocaleDateString(undefined, { month: 'short', year: 'numeric', timeZone: 'UTC' });
const monthShort = (start: string) =>
  new Date(start).toLocaleDateString(undefined, { month: 'short', timeZone: 'UTC' });

/** The first page after sign-in: the seller's own figures (GET /v1/overview). */
export function OverviewPage() {
  const overview = useLoad(() => api.get<Overview>('/overview'), 'overview');
  return (
    <Page title="Overview">
      <Loading state={overview}>{(data) => <OverviewBody data={data} />}</Loading>
    </Page>
  );
}

function OverviewBody({ data }: { data: Overview }) {
  const nothingYet =
    data.licenses.total === 0 &&
    data.orders.latest.length === 0 &&
    data.revenue.last12Months.series.length === 0;
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
      <Cards data={data} />
      <Section title="Revenue">
        {data.revenue.last12Months.series.length === 0 ? (
          <p>No sales in the last 12 months. Paid orders appear here per currency.</p>
        ) : (
          <div class="charts">
            {data.revenue.last30Days.series.map((series) => (
              <RevenueChart key={`d-${series.currency}`} series={series} period="last 30 days" daily />
            ))}
            {data.revenue.last12Months.series.map((series) => (
              <RevenueChart key={`m-${series.currency}`} series={series} period="last 12 months" />
            ))}
          </div>
        )}
      </Section>
      <Section title="Verifications and activations">
        <div class="charts">
          <Chart
            kind="bar"
            title={`Verifications per day, last 30 days (${formatNumber(data.activity.totals.valid)} valid, ${formatNumber(data.activity.totals.invalid)} invalid)`}
            labels={data.activity.points.map((p) => formatDate(p.start))}
            axisLabels={data.activity.points.map((p) => day(p.start))}
            series={[
              { name: 'Valid', values: data.activity.points.map((p) => p.valid) },
              { name: 'Invalid', values: data.activity.points.map((p) => p.invalid) },
            ]}
            format={formatNumber}
          />
          <Chart
            kind="bar"
            title={`New device activations per day, last 30 days (${formatNumber(data.activity.totals.activations)})`}
            labels={data.activity.points.map((p) => formatDate(p.start))}
            axisLabels={data.activity.points.map((p) => day(p.start))}
            series={[{ name: 'Activations', values: data.activity.points.map((p) => p.activations) }]}
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
                    : `${endpoint.consecutiveFailures} failed deliveries since ${formatDateTime(endpoint.failingSince)}`,
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

function Cards({ data }: { data: Overview }) {
  const { activity, licenses, webhooks, disputes } = data;
  const troubled = webhooks.failing + webhooks.disabled;
  const cards: [string, string, string][] = [
    ...data.revenue.last30Days.series.map((s): [string, string, string] => [
      `Revenue in ${s.currency}, 30 days`,
      formatMoney(s.amount, s.currency),
      `${formatNumber(s.orders)} paid orders`,
    ]),
    [
      'Active licenses',
      formatNumber(licenses.byStatus.active),
      `of ${formatNumber(licenses.total)} · ${formatNumber(licenses.byStatus.suspended)} suspended`,
    ],
    [
      'Verifications, 30 days',
      formatNumber(activity.totals.valid + activity.totals.invalid),
      `${formatNumber(activity.totals.valid)} valid · ${formatNumber(activity.totals.invalid)} invalid`,
    ],
    ['New activations, 30 days', formatNumber(activity.totals.activations), 'devices bound to licenses'],
    [
      'Webhooks needing attention',
      formatNumber(troubled),
      `${formatNumber(webhooks.failing)} failing · ${formatNumber(webhooks.disabled)} disabled`,
    ],
    [
      'Open disputes',
      formatNumber(disputes.open),
      disputes.open ? 'waiting for you or the card partner' : '',
    ],
  ];
  return (
    <ul class="cards" aria-label="Figures">
      {cards.map(([title, value, note]) => (
        <li key={title} class="card">
          <span class="card-title">{title}</span>
          <span class="card-value">{value}</span>
          {note && <span class="muted">{note}</span>}
        </li>
      ))}
    </ul>
  );
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
      title={`Revenue in ${series.currency}, ${period} (${formatMoney(series.amount, series.currency)} from ${formatNumber(series.orders)} paid orders)`}
      labels={series.points.map((p) => (daily ? formatDate(p.start) : month(p.start)))}
      axisLabels={series.points.map((p) => (daily ? day(p.start) : monthShort(p.start)))}
      series={[{ name: `Revenue (${series.currency})`, values: series.points.map((p) => p.amount) }]}
      format={(value) => formatMoney(value, series.currency)}
    />
  );
}
