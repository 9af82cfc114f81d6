import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { CopyButton, ShortKey } from '../components/copy';
import { useConfirm } from '../components/dialog';
import { ActionButton, Form, FormError, Submit, TextField } from '../components/form';
import { ListTable } from '../components/list';
import { Facts, Loading, Page, Section, StatusBadge } from '../components/page';
import { useAnnounce } from '../components/status';
import { Timeline } from '../components/timeline';
import { useAction, useLoad } from '../components/use-api';
import { dateInputValue, endOfDayUtc, formatDateTime } from '../format';
import { href } from '../router';
import type { Device, License, Product } from '../types';
import { LicenseLimits } from './licenses';

export function LicenseDetailPage({ appId, licenseId }: { appId: string; licenseId: string }) {
  const base = `/apps/${appId}/licenses/${licenseId}`;
  const license = useLoad(() => api.get<License>(base), base);
  return (
    <Page title="License">
      <p>
        <a href={href(`/apps/${appId}/licenses`)}>Back to the app’s licenses</a>
      </p>
      <Loading state={license}>
        {(loaded) => (
          <>
            <LicenseFacts license={loaded} onChanged={license.reload} base={base} />
            <Devices base={base} onChanged={license.reload} />
            <Section title="Timeline">
              <Timeline base={base} version={loaded.updatedAt} />
            </Section>
            <EditLicense license={loaded} base={base} onSaved={license.reload} />
          </>
        )}
      </Loading>
    </Page>
  );
}

/** What can happen to a license in each status, in the order the buttons stand. */
const MOVES = [
  {
    to: 'suspend',
    from: ['active', 'trial'],
    label: 'Suspend',
    done: 'License suspended',
    kind: 'secondary',
  },
  { to: 'reinstate', from: ['suspended'], label: 'Reinstate', done: 'License reinstated', kind: 'primary' },
  {
    to: 'revoke',
    from: ['active', 'trial', 'suspended', 'expired'],
    label: 'Revoke',
    done: 'License revoked',
    kind: 'danger',
  },
] as const;

function LicenseFacts({ license, base, onChanged }: { license: License; base: string; onChanged(): void }) {
  const product = useLoad(
    () => (license.productId ? api.get<Product>(`/products/${license.productId}`) : Promise.resolve(null)),
    license.productId ?? '',
  );
  const action = useAction();
  const announce = useAnnounce();
  const [confirm, confirmDialog] = useConfirm();
  const move = async (to: (typeof MOVES)[number]['to'], done: string) => {
    if (
      to === 'revoke' &&
      !(await confirm({
        title: 'Revoke this license?',
        message:
          'A revoked license never works again; this cannot be undone. Suspend it instead to pause it.',
        action: 'Revoke license',
        danger: true,
      }))
    )
      return;
    if (await action.run(() => api.post<License>(`${base}/${to}`))) {
      announce(done);
      onChanged();
    }
  };
  const { metadata } = license;
  return (
    <Section title="Details">
      <Facts
        facts={{
          Key: (
            <>
              <code class="mono">
                <ShortKey value={license.key} />
              </code>{' '}
              <CopyButton text={license.key} label="Copy license key" what="License key" />
            </>
          ),
          Status: <StatusBadge status={license.status} />,
          'E-mail': license.email ?? '—',
          Product: license.productId ? (product.data?.name ?? license.productId) : '—',
          Expires: license.expiresAt ? formatDateTime(license.expiresAt) : 'Never',
          Devices: `${license.deviceCount}${license.maxDevices !== null ? ` of at most ${license.maxDevices}` : ' (no limit)'}`,
          Metadata: Object.keys(metadata).length > 0 ? <code>{JSON.stringify(metadata)}</code> : '—',
          Issued: formatDateTime(license.createdAt),
        }}
      />
      <div class="actions">
        {MOVES.filter((m) => (m.from as readonly string[]).includes(license.status)).map((m) => (
          <ActionButton key={m.to} action={action} kind={m.kind} onClick={() => move(m.to, m.done)}>
            {m.label}
          </ActionButton>
        ))}
      </div>
      <FormError error={action.error} />
      {confirmDialog}
    </Section>
  );
}

function Devices({ base, onChanged }: { base: string; onChanged(): void }) {
  const devices = useLoad(() => api.get<{ devices: Device[]; total: number }>(`${base}/devices`), base);
  const action = useAction();
  const announce = useAnnounce();
  const [confirm, confirmDialog] = useConfirm();
  const release = async (device: Device) => {
    const yes = await confirm({
      title: `Remove the device “${device.hwuid}”?`,
      message: 'Its place is freed; the device takes a place again the next time it verifies.',
      action: 'Remove device',
      danger: true,
    });
    if (yes && (await action.run(() => api.delete(`${base}/devices/${encodeURIComponent(device.hwuid)}`)))) {
      announce(`Device ${device.hwuid} removed`);
      devices.reload();
      onChanged();
    }
  };
  return (
    <Section title="Devices">
      <Loading state={devices}>
        {(list) => (
          <ListTable
            caption="Devices"
            rows={list.devices}
            rowKey={(device) => device.hwuid}
            empty={<p>No device has activated this license.</p>}
            columns={[
              { title: 'Device id', cell: (device) => <code>{device.hwuid}</code> },
              { title: 'Name', cell: (device) => device.name ?? '—' },
              { title: 'Platform', cell: (device) => device.platform ?? '—' },
              { title: 'Activated', cell: (device) => formatDateTime(device.activatedAt) },
            ]}
            actions={(device) => (
              <ActionButton action={action} kind="danger" onClick={() => release(device)}>
                Remove <span class="visually-hidden">device {device.hwuid}</span>
              </ActionButton>
            )}
          />
        )}
      </Loading>
      <FormError error={action.error} />
      {confirmDialog}
    </Section>
  );
}

function EditLicense({ license, base, onSaved }: { license: License; base: string; onSaved(): void }) {
  const [email, setEmail] = useState(license.email ?? '');
  const [expires, setExpires] = useState(dateInputValue(license.expiresAt));
  const [maxDevices, setMaxDevices] = useState(license.maxDevices === null ? '' : String(license.maxDevices));
  useEffect(() => {
    setEmail(license.email ?? '');
    setExpires(dateInputValue(license.expiresAt));
    setMaxDevices(license.maxDevices === null ? '' : String(license.maxDevices));
  }, [license]);
  const action = useAction();
  const announce = useAnnounce();
  const submit = () =>
    action.run(async () => {
      const changes: Record<string, unknown> = {};
      if (email.trim() !== (license.email ?? '')) changes.email = email.trim() || null;
      if (expires !== dateInputValue(license.expiresAt)) changes.expiresAt = endOfDayUtc(expires);
      const devices = maxDevices.trim() === '' ? null : Number(maxDevices);
      if (devices !== license.maxDevices) changes.maxDevices = devices;
      if (Object.keys(changes).length === 0) {
        announce('Nothing to save: no field changed');
        return;
      }
      await api.patch<License>(base, changes);
      announce('License saved');
      onSaved();
    });
  return (
    <Section title="Change the license">
      <Form label="Change the license" onSubmit={submit}>
        <TextField
          label="Buyer e-mail"
          name="email"
          type="email"
          value={email}
          onValue={setEmail}
          error={action.error}
        />
        <LicenseLimits
          expires={expires}
          onExpires={setExpires}
          expiresHint="Until the end of this day (UTC). Empty: never."
          maxDevices={maxDevices}
          onMaxDevices={setMaxDevices}
          error={action.error}
        />
        <Submit action={action}>Save license</Submit>
      </Form>
    </Section>
  );
}
