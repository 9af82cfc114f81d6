import { useState } from 'preact/hooks';
import { api } from '../api';
import { FormError, TextField } from '../components/form';
import { Section } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction } from '../components/use-api';
import type { Artifact } from '../types';

const EMPTY = { filename: '', platform: '', arch: '', url: '', size: '', sha256: '', sha512: '' };

/**
 * A file the seller hosts: its https address, the name buyers see it as, and what they care to
 * declare of its size and digests (a signed manifest needs all three). Only the fields filled in
 * are sent; the service refuses a wrong one by name, and the form shows it under that field.
 */
export function HostedArtifact({ base, onAdded }: { base: string; onAdded(): void }) {
  const [fields, setFields] = useState(EMPTY);
  const action = useAction();
  const announce = useAnnounce();
  const set = (name: keyof typeof EMPTY) => (value: string) => setFields({ ...fields, [name]: value });
  const send = () =>
    action.run(async () => {
      const filled = Object.entries(fields)
        .map(([name, value]) => [name, value.trim()] as const)
        .filter(([, value]) => value !== '');
      const body = Object.fromEntries(
        filled.map(([name, value]) => [name, name === 'size' ? Number(value) : value]),
      );
      const added = await api.post<Artifact>(`${base}/artifacts`, body);
      announce(`${added.filename} added`);
      setFields(EMPTY);
      onAdded();
    });
  const field = (name: keyof typeof EMPTY) => ({
    name,
    value: fields[name],
    onValue: set(name),
    error: action.error,
  });
  return (
    <Section title="Add a file you host">
      <form
        class="form"
        aria-label="Add a file you host"
        noValidate
        onSubmit={(event) => {
          event.preventDefault();
          void send();
        }}
      >
        <p class="hint">
          Buyers with a license are sent to this address when they download the file; the service never
          fetches it. The size and digests are yours to give: a signed manifest needs all three,
          electron-updater the size and SHA-512.
        </p>
        <TextField
          label="Address"
          type="url"
          required
          {...field('url')}
          hint="The file’s https address, where you host it."
        />
        <TextField
          label="File name"
          required
          {...field('filename')}
          hint="What buyers download it as: letters, digits, ., _, + and -, no spaces."
        />
        <div class="row">
          <TextField label="Platform" {...field('platform')} hint="Empty: every platform." />
          <TextField label="Architecture" {...field('arch')} hint="Empty: every architecture." />
        </div>
        <TextField label="Size in bytes" inputMode="numeric" {...field('size')} hint="Optional." />
        <TextField label="SHA-256" {...field('sha256')} hint="Optional: hex." />
        <TextField label="SHA-512" {...field('sha512')} hint="Optional: hex, or base64 as in latest.yml." />
        <FormError error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Add file
        </button>
      </form>
    </Section>
  );
}
