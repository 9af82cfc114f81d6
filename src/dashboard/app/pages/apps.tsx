import { useState } from 'preact/hooks';
import { api } from '../api';
import { EmptyState, useCreatePanel } from '../components/create-panel';
import { Form, Submit, TextArea, TextField } from '../components/form';
import { ListTable, Pager, useOffsetList } from '../components/list';
import { Loading, Page, Section } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction } from '../components/use-api';
import { formatDate } from '../format';
import { href, navigate } from '../router';
import type { App, OffsetPage } from '../types';

export function AppsPage() {
  const apps = useOffsetList<OffsetPage<'apps', App>>('/apps');
  const create = useCreatePanel('New app');
  return (
    <Page title="Apps" actions={create.button}>
      <p class="muted">An app is your software: it holds its licenses, API keys and webhooks.</p>
      {create.panel(<CreateApp />)}
      <Loading state={apps}>
        {(page) => (
          <ListTable
            caption="Your apps"
            rows={page.apps}
            empty={
              !create.open && (
                <EmptyState
                  title="No apps yet"
                  action={
                    <button type="button" class="primary" onClick={create.show}>
                      Create your first app
                    </button>
                  }
                >
                  Create your first app: it holds the licenses you issue or sell, and the API keys your
                  software verifies them with.
                </EmptyState>
              )
            }
            columns={[
              { title: 'Name', cell: (app) => <a href={href(`/apps/${app.id}`)}>{app.name}</a> },
              { title: 'Description', cell: (app) => app.description || <span class="muted">—</span> },
              { title: 'Created', cell: (app) => formatDate(app.createdAt) },
            ]}
            pager={<Pager label="Apps" page={page} onOffset={apps.setOffset} />}
          />
        )}
      </Loading>
    </Page>
  );
}

function CreateApp() {
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const action = useAction();
  const announce = useAnnounce();
  const submit = () =>
    action.run(async () => {
      const app = await api.post<App>('/apps', { name, ...(description ? { description } : {}) });
      announce(`App ${app.name} created`);
      navigate(`/apps/${app.id}`);
    });
  return (
    <Section title="Create an app">
      <Form label="Create an app" onSubmit={submit}>
        <TextField
          label="App name"
          name="name"
          required
          value={name}
          onValue={setName}
          error={action.error}
        />
        <TextArea
          label="Description"
          name="description"
          value={description}
          onValue={setDescription}
          error={action.error}
        />
        <Submit action={action}>Create app</Submit>
      </Form>
    </Section>
  );
}
