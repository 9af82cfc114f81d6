import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { CopyButton } from '../components/copy';
import { useConfirm } from '../components/dialog';
import { Form, FormError, TextField } from '../components/form';
import { Loading, Page, StatusBadge } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction, useLoad } from '../components/use-api';
import { dateInputValue, endOfDayUtc, formatDateTime } from '../format';
import { href } from '../router';
import type { Device, License, Product } from '../types';

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
            <EditLicense license={loaded} base={base} onSaved={license.reload} />
          </>
        )}
      </Loading>
    </Page>
  );
}

function LicenseFacts({ license, base, onChanged }: { license: License; base: string; onChanged(): void }) {
  const product = useLoad(
    () => (license.productId ? api.get<Product>(`/products/${license.productId}`) : Promise.resolve(null)),
    license.productId ?? '',
  );
  const action = useAction();
  const announce = useAnnounce();
  const [confirm, confirmDialog] = useConfirm();
  const move = async (to: 'suspend' | 'reinstate' | 'revoke', done: string) => {
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
    <section aria-labelledby="license-facts">
      <h2 id="license-facts">Details</h2>
      <dl class="facts">
        <dt>Key</dt>
        <dd>
          <code class="mono">{license.key}</code>{' '}
          <CopyButton text={license.key} label="Copy license key" what="License key" />
        </dd>
        <dt>Status</dt>
        <dd>
          <StatusBadge status={license.status} />
        </dd>
        <dt>E-mail</dt>
        <dd>{license.email ?? '—'}</dd>
        <dt>Product</dt>
        <dd>{license.productId ? (product.data?.name ?? license.productId) : '—'}</dd>
        <dt>Expires</dt>
        <dd>{license.expiresAt ? formatDateTime(license.expiresAt) : 'Never'}</dd>
        <dt>Devices</dt>
        <dd>
          {license.deviceCount}
          {license.maxDevices !== null ? ` of at most ${license.maxDevices}` : ' (no limit)'}
        </dd>
        <dt>Metadata</dt>
        <dd>{Object.keys(metadata).length > 0 ? <code>{JSON.stringify(metadata)}</code> : '—'}</dd>
        <dt>Issued</dt>
        <dd>{formatDateTime(license.createdAt)}</dd>
      </dl>
      <div class="actions">
        {license.status === 'active' && (
          <button
            type="button"
            class="secondary"
            disabled={action.busy}
            onClick={() => move('suspend', 'License suspended')}
          >
            Suspend
          </button>
        )}
        {license.status === 'suspended' && (
          <button
            type="button"
            class="primary"
            disabled={action.busy}
            onClick={() => move('reinstate', 'License reinstated')}
          >
            Reinstate
          </button>
        )}
        {(license.status === 'active' || license.status === 'suspended') && (
          <button
            type="button"
            class="danger"
            disabled={action.busy}
            onClick={() => move('revoke', 'License revoked')}
          >
            Revoke
          </button>
        )}
      </div>
      <FormError error={action.error} />
      {confirmDialog}
    </section>
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
    <section aria-labelledby="license-devices">
      <h2 id="license-devices">Devices</h2>
      <Loading state={devices}>
        {(list) =>
          list.devices.length === 0 ? (
            <p>No device has activated this license.</p>
          ) : (
            <table>
              <caption class="visually-hidden">Devices</caption>
              <thead>
                <tr>
                  <th scope="col">Device id</th>
                  <th scope="col">Activated</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.devices.map((device) => (
                  <tr key={device.hwuid}>
                    <th scope="row">
                      <code>{device.hwuid}</code>
                    </th>
                    <td>{formatDateTime(device.activatedAt)}</td>
                    <td>
                      <button
                        type="button"
                        class="danger"
                        disabled={action.busy}
                        onClick={() => release(device)}
                      >
                        Remove <span class="visually-hidden">device {device.hwuid}</span>
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loading>
      <FormError error={action.error} />
      {confirmDialog}
    </section>
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
    <section aria-labelledby="edit-license">
      <h2 id="edit-license">Change the license</h2>
      <Form label="Change the license" onSubmit={submit}>
        <TextField
          label="Buyer e-mail"
          name="email"
          type="email"
          value={email}
          onValue={setEmail}
          error={action.error}
        />
        <div class="row">
          <TextField
            label="Expires on"
            name="expiresAt"
            type="date"
            hint="Until the end of this day (UTC). Empty: never."
            value={expires}
            onValue={setExpires}
            error={action.error}
          />
          <TextField
            label="Maximum devices"
            name="maxDevices"
            type="number"
            min={1}
            hint="Empty: no limit."
            value={maxDevices}
            onValue={setMaxDevices}
            error={action.error}
          />
        </div>
        <FormError error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Save license
        </button>
      </Form>
    </section>
  );
}
