import { useState } from 'preact/hooks';
import { api } from '../api';
import { Form, Submit, TextField } from '../components/form';
import { Page } from '../components/page';
import { useAction } from '../components/use-api';
import { href } from '../router';
import type { SignedIn } from '../session-context';
import type { Session } from '../types';
import { CredentialFields, NO_CREDENTIALS } from './sign-in';

export function SignUpPage({ onSignedIn }: { onSignedIn: SignedIn }) {
  const [name, setName] = useState('');
  const [credentials, setCredentials] = useState(NO_CREDENTIALS);
  const action = useAction();
  const submit = () =>
    action.run(async () =>
      onSignedIn(
        await api.post<Session>('/auth/register', {
          ...credentials,
          ...(name.trim() ? { name: name.trim() } : {}),
        }),
      ),
    );
  return (
    <Page title="Create an account">
      <Form label="Create an account" onSubmit={submit} class="form narrow">
        <TextField
          label="Name"
          name="name"
          autoComplete="name"
          value={name}
          onValue={setName}
          error={action.error}
        />
        <CredentialFields value={credentials} onValue={setCredentials} error={action.error} newAccount />
        <Submit action={action}>Create account</Submit>
      </Form>
      <p>
        Already have an account? <a href={href('/sign-in')}>Sign in</a>
      </p>
    </Page>
  );
}
