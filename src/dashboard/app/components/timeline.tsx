import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { formatDateTime } from '../format';
import type { TimelineEntry, TimelinePage } from '../types';
import { Checkbox, FormError } from './form';
import { ListTable } from './list';
import { useAction } from './use-api';

/** What each kind of entry says happened, in the seller's words. */
const WHAT: Record<string, string> = {
  verification: 'Verified',
  'device.activated': 'Device activated',
  'device.released': 'Device released',
  'seat.acquired': 'Seat taken',
  'seat.released': 'Seat given back',
  'seat.lapsed': 'Seat lapsed',
  'usage.consumed': 'Usage consumed',
  check_in: 'Checked in',
  'license_file.issued': 'License file issued (offline)',
  'license.created': 'Issued',
  'license.updated': 'Changed',
  'license.key_regenerated': 'New key',
  'license.suspended': 'Suspended',
  'license.reinstated': 'Reinstated',
  'license.revoked': 'Revoked',
  'license.expired': 'Expired',
  'license.renewed': 'Renewed',
  'email.sent': 'E-mail sent',
  'email.failed': 'E-mail failed',
  'webhook.event': 'Webhook event',
  'webhook.failed': 'Webhook delivery failed',
};

const BY: Record<string, string> = {
  seller: 'You',
  api_key: 'API key',
  buyer: 'Buyer (portal)',
  billing: 'Billing',
  system: 'Expiry job',
};

/** Identical calls within one write of the node's buffer are one entry counting them. */
function when(entry: TimelineEntry) {
  const first = formatDateTime(entry.occurredAt);
  return entry.lastOccurredAt ? `${first} to ${formatDateTime(entry.lastOccurredAt)}` : first;
}

function what(entry: TimelineEntry) {
  const label = WHAT[entry.type] ?? entry.type;
  const times = entry.repeats > 1 ? `, ${entry.repeats} times` : '';
  if (entry.type === 'verification') {
    return entry.outcome === 'valid' ? (
      <>
        {label}: valid{times}
      </>
    ) : (
      <>
        {label}: refused <code>{entry.outcome}</code>
        {times}
      </>
    );
  }
  const detail = entry.data.eventType ?? entry.data.kind ?? entry.data.reason ?? entry.data.cause;
  return typeof detail === 'string' ? (
    <>
      {label} <code>{detail}</code>
      {times}
    </>
  ) : (
    `${label}${times}`
  );
}

/**
 * A license's timeline, newest first: a page at a time ("Load more"), all of it or only the
 * failures (refused verifications, failed deliveries). Read again when `version` changes.
 */
export function Timeline({ base, version }: { base: string; version: string }) {
  const [entries, setEntries] = useState<TimelineEntry[]>([]);
  const [next, setNext] = useState<string | null>(null);
  const [failuresOnly, setFailuresOnly] = useState(false);
  const [loaded, setLoaded] = useState(false);
  const action = useAction();
  const read = (cursor: string | null) => {
    const query = new URLSearchParams();
    if (failuresOnly) query.set('outcome', 'failure');
    if (cursor) query.set('cursor', cursor);
    const text = query.toString();
    return api.get<TimelinePage>(`${base}/events${text ? `?${text}` : ''}`);
  };
  useEffect(() => {
    let current = true;
    setLoaded(false);
    action.run(async () => {
      const page = await read(null);
      if (!current) return;
      setEntries(page.events);
      setNext(page.nextCursor);
      setLoaded(true);
    });
    return () => {
      current = false;
    };
  }, [base, version, failuresOnly]);
  const more = () =>
    action.run(async () => {
      const page = await read(next);
      setEntries((shown) => [...shown, ...page.events]);
      setNext(page.nextCursor);
    });
  return (
    <>
      <Checkbox
        label="Only failures"
        name="timeline-failures"
        hint="Refused verifications and failed deliveries"
        checked={failuresOnly}
        onChecked={setFailuresOnly}
      />
      {loaded && (
        <ListTable
          caption="Timeline"
          rows={entries}
          empty={<p>{failuresOnly ? 'No failures recorded.' : 'Nothing recorded yet.'}</p>}
          columns={[
            { title: 'When', cell: when },
            { title: 'What', card: 'figure', cell: what },
            { title: 'Device', cell: (entry) => (entry.hwuid ? <code>{entry.hwuid}</code> : '—') },
            { title: 'From', cell: (entry) => entry.clientAddress ?? '—' },
            { title: 'App version', cell: (entry) => entry.appVersion ?? '—' },
            {
              title: 'By',
              cell: (entry) => (entry.actor ? (BY[entry.actor.kind] ?? entry.actor.kind) : '—'),
            },
          ]}
          pager={
            next ? (
              <button type="button" class="secondary" disabled={action.busy} onClick={more}>
                Load more
              </button>
            ) : undefined
          }
        />
      )}
      <FormError error={action.error} />
    </>
  );
}
