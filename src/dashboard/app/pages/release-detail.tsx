import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { useConfirm } from '../components/dialog';
import {
  ActionButton,
  Form,
  FormError,
  optionsOf,
  SelectField,
  Submit,
  TextArea,
  TextField,
} from '../components/form';
import { Facts, Loading, Page, Section, StatusBadge } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction, useLoad } from '../components/use-api';
import { formatDateTime } from '../format';
import { href, navigate } from '../router';
import { RELEASE_CHANNELS, type Release } from '../types';
import { Artifacts } from './release-artifacts';
import { Downloads } from './release-downloads';
import { CHANNEL_LABELS, featureList } from './releases';

/** One release: its facts and moves (publish, yank, delete a draft), its notes, and its files. */
export function ReleaseDetailPage({ appId, releaseId }: { appId: string; releaseId: string }) {
  const base = `/apps/${appId}/releases/${releaseId}`;
  const release = useLoad(() => api.get<Release>(base), base);
  return (
    <Page title={release.data ? `Release ${release.data.version}` : 'Release'}>
      <p>
        <a href={href(`/apps/${appId}/releases`)}>Back to the app’s releases</a>
      </p>
      <Loading state={release}>
        {(loaded) => (
          <>
            <ReleaseFacts release={loaded} base={base} onChanged={release.reload} />
            <Artifacts release={loaded} base={base} />
            {loaded.status !== 'draft' && <Downloads release={loaded} base={base} />}
            {loaded.status !== 'yanked' && (
              <EditRelease release={loaded} base={base} onSaved={release.reload} />
            )}
          </>
        )}
      </Loading>
    </Page>
  );
}

function ReleaseFacts({ release, base, onChanged }: { release: Release; base: string; onChanged(): void }) {
  const action = useAction();
  const announce = useAnnounce();
  const [confirm, confirmDialog] = useConfirm();
  const publish = async () => {
    const yes = await confirm({
      title: `Publish version ${release.version}?`,
      message:
        'Licenses that may have it are offered it at their next update check, and buyers see it in their portal. Its files can no longer be removed or replaced; a published release can only be yanked.',
      action: 'Publish release',
    });
    if (yes && (await action.run(() => api.post<Release>(`${base}/publish`)))) {
      announce(`Version ${release.version} published`);
      onChanged();
    }
  };
  const yank = async () => {
    const yes = await confirm({
      title: `Yank version ${release.version}?`,
      message:
        'It is never offered again, and its download links stop at once. Its version stays taken: publish a newer version instead. This cannot be undone.',
      action: 'Yank release',
      danger: true,
    });
    if (yes && (await action.run(() => api.post<Release>(`${base}/yank`)))) {
      announce(`Version ${release.version} yanked`);
      onChanged();
    }
  };
  const remove = async () => {
    const yes = await confirm({
      title: `Delete the draft ${release.version}?`,
      message: 'The draft and its files are deleted. No one has seen it.',
      action: 'Delete draft',
      danger: true,
    });
    if (yes && (await action.run(() => api.delete(base)))) {
      announce(`Draft ${release.version} deleted`);
      navigate(`/apps/${release.appId}/releases`);
    }
  };
  return (
    <Section title="Details">
      <Facts
        facts={{
          Version: <span class="break">{release.version}</span>,
          Status: <StatusBadge status={release.status} />,
          Channel: CHANNEL_LABELS[release.channel] ?? release.channel,
          'Required entitlements': release.requiredFeatures.length
            ? release.requiredFeatures.join(', ')
            : 'None: every license of the app',
          Published: release.publishedAt ? formatDateTime(release.publishedAt) : 'Not yet',
          ...(release.yankedAt ? { Yanked: formatDateTime(release.yankedAt) } : {}),
          Created: formatDateTime(release.createdAt),
        }}
      />
      {release.notes && (
        <div class="release-notes">
          <h3>Release notes</h3>
          <p>{release.notes}</p>
        </div>
      )}
      <div class="actions">
        {release.status === 'draft' && (
          <ActionButton action={action} kind="primary" onClick={publish}>
            Publish
          </ActionButton>
        )}
        {release.status === 'published' && (
          <ActionButton action={action} kind="danger" onClick={yank}>
            Yank
          </ActionButton>
        )}
        {release.status === 'draft' && (
          <ActionButton action={action} kind="danger" onClick={remove}>
            Delete draft
          </ActionButton>
        )}
      </div>
      {release.status === 'yanked' && (
        <p class="muted">A yanked release is kept as it is: it is never offered again and does not change.</p>
      )}
      <FormError error={action.error} />
      {confirmDialog}
    </Section>
  );
}

/** Notes, channel and required entitlements; the version too while it is a draft. Sends what changed. */
function EditRelease({ release, base, onSaved }: { release: Release; base: string; onSaved(): void }) {
  const initial = () => ({
    version: release.version,
    channel: release.channel as string,
    notes: release.notes,
    features: release.requiredFeatures.join(', '),
  });
  const [draft, setDraft] = useState(initial);
  useEffect(() => setDraft(initial()), [release]);
  const action = useAction();
  const announce = useAnnounce();
  const submit = () =>
    action.run(async () => {
      const changes: Record<string, unknown> = {};
      if (release.status === 'draft' && draft.version.trim() !== release.version)
        changes.version = draft.version.trim();
      if (draft.channel !== release.channel) changes.channel = draft.channel;
      if (draft.notes !== release.notes) changes.notes = draft.notes;
      const features = featureList(draft.features);
      if (features.join(',') !== release.requiredFeatures.join(',')) changes.requiredFeatures = features;
      if (Object.keys(changes).length === 0) {
        announce('Nothing to save: no field changed');
        return;
      }
      await api.patch<Release>(base, changes);
      announce('Release saved');
      onSaved();
    });
  return (
    <Section title="Change the release">
      <Form label="Change the release" onSubmit={submit}>
        {release.status === 'draft' && (
          <TextField
            label="Version"
            name="version"
            required
            value={draft.version}
            onValue={(version) => setDraft({ ...draft, version })}
            error={action.error}
            hint="Only a draft’s version changes."
          />
        )}
        <SelectField
          label="Channel"
          name="channel"
          value={draft.channel}
          options={optionsOf(RELEASE_CHANNELS, (c) => CHANNEL_LABELS[c] ?? c)}
          onValue={(channel) => setDraft({ ...draft, channel })}
          error={action.error}
        />
        <TextArea
          label="Release notes"
          name="notes"
          rows={5}
          value={draft.notes}
          onValue={(notes) => setDraft({ ...draft, notes })}
          error={action.error}
        />
        <TextField
          label="Required entitlements"
          name="requiredFeatures"
          value={draft.features}
          onValue={(features) => setDraft({ ...draft, features })}
          error={action.error}
          hint="Separated by commas. Empty: every license of the app."
        />
        <Submit action={action}>Save release</Submit>
      </Form>
    </Section>
  );
}
