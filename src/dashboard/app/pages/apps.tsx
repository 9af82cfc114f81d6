import { useState } from 'preact/hooks';
import { api } from '../api';
import { Form, FormError, TextArea, TextField } from '../components/form';
import { Loading, Page, Pager } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction, useLoad } from '../components/use-api';
import { formatDate } from '../format';
import { href, navigate } from '../router';
import type { App, OffsetPage } from '../types';

export function AppsPage() {
  const [offset, setOffset] = useState(0);
  const apps = useLoad(() => api.get<OffsetPage<'apps', App>>('/apps', { offset }), String(offset));
  return (
    <Page title="Apps">
      <p class="muted">An app is your software: it holds its licenses, API keys and webhooks.</p>
      <Loading state={apps}>
        {(page) =>
          page.apps.length === 0 ? (
            <p>No apps yet. Create your first one below.</p>
          ) : (
            <>
              <table>
                <caption class="visually-hidden">Your apps</caption>
                <thead>
                  <tr>
                    <th scope="col">Name</th>
                    <th scope="col">Description</th>
                    <th scope="col">Created</th>
                  </tr>
                </thead>
                <tbody>
                  {page.apps.map((app) => (
                    <tr key={app.id}>
                      <th scope="row">
                        <a href={href(`/apps/${app.id}`)}>{app.name}</a>
                      </th>
                      <td>{app.description || <span class="muted">—</span>}</td>
                      <td>{formatDate(app.createdAt)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <Pager
                label="Apps"
                total={page.total}
                limit={page.limit}
                offset={page.offset}
                onOffset={setOffset}
              />
            </>
          )
        }
      </Loading>
      <CreateApp />
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
    <section aria-labelledby="create-app">
      <h2 id="create-app">Create an app</h2>
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
        <FormError error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Create app
        </button>
      </Form>
    </section>
  );
}
