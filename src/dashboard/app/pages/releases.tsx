import { useEffect, useState } from 'preact/hooks';
import { api } from '../api';
import { EmptyState, useCreatePanel } from '../components/create-panel';
import {
  Form,
  optionsOf,
  SearchForm,
  SelectField,
  StatusSelect,
  Submit,
  TextArea,
  TextField,
} from '../components/form';
import { ListTable, Pager, ResultCount, useUrlList } from '../components/list';
import { Loading, Page, Section, StatusBadge } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction, useLoad } from '../components/use-api';
import { formatDate, formatDateTime } from '../format';
import { href, navigate } from '../router';
import { type App, type OffsetPage, RELEASE_CHANNELS, RELEASE_STATUSES, type Release } from '../types';

/** The list's filters, as the URL's query and the API name them. */
const FIELDS = ['channel', 'status'] as const;
type Field = (typeof FIELDS)[number];

/** How a channel reads: who receives it. */
export const CHANNEL_LABELS: Record<string, string> = {
  stable: 'Stable',
  rc: 'Release candidate (rc)',
  beta: 'Beta',
  alpha: 'Alpha',
  dev: 'Development (dev)',
};

/** The entitlements typed in one field, separated by commas or spaces. */
export const featureList = (text: string) =>
  text
    .split(/[\s,]+/)
    .map((feature) => feature.trim())
    .filter(Boolean);

/** An app's releases, newest version first; channel and status filters live in the URL. */
export function ReleasesPage({ appId }: { appId: string }) {
  const app = useLoad(() => api.get<App>(`/apps/${appId}`), appId);
  const releases = useUrlList<OffsetPage<'releases', Release>, Field>(`/apps/${appId}/releases`, FIELDS);
  const filterKey = JSON.stringify(releases.filter);
  const [draft, setDraft] = useState(releases.filter);
  useEffect(() => setDraft(releases.filter), [filterKey]);
  const filtering = Boolean(releases.filter.channel || releases.filter.status);
  const create = useCreatePanel('New release');
  return (
    <Page title={app.data ? `Releases: ${app.data.name}` : 'Releases'} actions={create.button}>
      <p>
        <a href={href(`/apps/${appId}`)}>Back to the app</a>
      </p>
      <p class="muted">
        The versions of your software. A draft is seen by no one; once published, licenses that may have it
        are offered it by the update check and in the buyer portal.
      </p>
      {create.panel(<CreateRelease appId={appId} />)}
      <SearchForm
        label="Filter releases"
        onSearch={() => releases.filterBy(draft)}
        onClear={() => releases.filterBy({ channel: '', status: '' })}
      >
        <SelectField
          label="Channel"
          name="channel"
          value={draft.channel}
          options={[
            { value: '', label: 'Any channel' },
            ...optionsOf(RELEASE_CHANNELS, (c) => CHANNEL_LABELS[c] ?? c),
          ]}
          onValue={(channel) => setDraft({ ...draft, channel })}
        />
        <StatusSelect
          statuses={RELEASE_STATUSES}
          value={draft.status}
          onValue={(status) => setDraft({ ...draft, status })}
        />
      </SearchForm>
      <Loading state={releases}>
        {(page) => (
          <>
            {filtering && (
              <ResultCount
                total={page.total}
                noun={['release', 'releases']}
                searching
                none="No release matches these filters."
              />
            )}
            <ListTable
              caption="Releases"
              rows={page.releases}
              busy={releases.loading}
              empty={
                filtering || create.open ? null : (
                  <EmptyState
                    title="No releases yet"
                    action={
                      <button type="button" class="primary" onClick={create.show}>
                        Create your first release
                      </button>
                    }
                  >
                    Create a release for each version you ship, upload its files, and publish it: your
                    software finds it with its license key, and buyers download it from their portal.
                  </EmptyState>
                )
              }
              columns={[
                {
                  title: 'Version',
                  cell: (release) => (
                    <a class="break" href={href(`/apps/${appId}/releases/${release.id}`)}>
                      {release.version}
                    </a>
                  ),
                },
                { title: 'Channel', cell: (release) => CHANNEL_LABELS[release.channel] ?? release.channel },
                {
                  title: 'Status',
                  card: 'status',
                  cell: (release) => <StatusBadge status={release.status} />,
                },
                {
                  title: 'Published',
                  card: 'figure',
                  cell: (release) => (release.publishedAt ? formatDate(release.publishedAt) : 'Not yet'),
                },
                {
                  title: 'Requires',
                  cell: (release) =>
                    release.requiredFeatures.length ? release.requiredFeatures.join(', ') : 'Any license',
                },
                { title: 'Created', cell: (release) => formatDateTime(release.createdAt) },
              ]}
              pager={<Pager label="Releases" page={page} onOffset={releases.setOffset} />}
            />
          </>
        )}
      </Loading>
    </Page>
  );
}

/** A new draft: its version, channel, notes and the entitlements it requires; then on to its page. */
function CreateRelease({ appId }: { appId: string }) {
  const [version, setVersion] = useState('');
  const [channel, setChannel] = useState('');
  const [notes, setNotes] = useState('');
  const [features, setFeatures] = useState('');
  const action = useAction();
  const announce = useAnnounce();
  const submit = () =>
    action.run(async () => {
      const created = await api.post<Release>(`/apps/${appId}/releases`, {
        version: version.trim(),
        ...(channel ? { channel } : {}),
        ...(notes ? { notes } : {}),
        requiredFeatures: featureList(features),
      });
      announce(`Release ${created.version} created as a draft`);
      navigate(`/apps/${appId}/releases/${created.id}`);
    });
  return (
    <Section title="New release">
      <Form label="New release" onSubmit={submit}>
        <TextField
          label="Version"
          name="version"
          required
          value={version}
          onValue={setVersion}
          error={action.error}
          hint="A semantic version: 1.4.0, 2.0.0-beta.3."
        />
        <SelectField
          label="Channel"
          name="channel"
          value={channel}
          options={[
            { value: '', label: 'From the version (2.0.0-beta.1 → beta)' },
            ...optionsOf(RELEASE_CHANNELS, (c) => CHANNEL_LABELS[c] ?? c),
          ]}
          onValue={setChannel}
          error={action.error}
          hint="A license following a channel receives it and every more stable one."
        />
        <TextArea
          label="Release notes"
          name="notes"
          rows={4}
          value={notes}
          onValue={setNotes}
          error={action.error}
        />
        <TextField
          label="Required entitlements"
          name="requiredFeatures"
          value={features}
          onValue={setFeatures}
          error={action.error}
          hint="Features a license must grant, all of them, separated by commas. Empty: every license of the app."
        />
        <Submit action={action}>Create release</Submit>
      </Form>
    </Section>
  );
}
