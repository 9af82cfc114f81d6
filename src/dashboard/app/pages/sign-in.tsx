import { useState } from 'preact/hooks';
import { type ApiError, api } from '../api';
import { Form, Submit, TextField } from '../components/form';
import { Page } from '../components/page';
import { useAction } from '../components/use-api';
import { href } from '../router';
import type { SignedIn } from '../session-context';
import type { Session } from '../types';

export interface Credentials {
  email: string;
  password: string;
}

export const NO_CREDENTIALS: Credentials = { email: '', password: '' };

/** An account's e-mail and password: an existing one's, or a new one's (told to password managers). */
export function CredentialFields({
  value,
  onValue,
  error,
  newAccount = false,
}: {
  value: Credentials;
  onValue(value: Credentials): void;
  error: ApiError | null;
  newAccount?: boolean;
}) {
  return (
    <>
      <TextField
        label="E-mail"
        name="email"
        type="email"
        autoComplete={newAccount ? 'email' : 'username'}
        required
        value={value.email}
        onValue={(email) => onValue({ ...value, email })}
        error={error}
      />
      <TextField
        label="Password"
        name="password"
        type="password"
        autoComplete={newAccount ? 'new-password' : 'current-password'}
        required
        hint={newAccount ? 'At least 8 characters.' : undefined}
        value={value.password}
        onValue={(password) => onValue({ ...value, password })}
        error={error}
      />
    </>
  );
}

export function SignInPage({ onSignedIn }: { onSignedIn: SignedIn }) {
  const [credentials, setCredentials] = useState(NO_CREDENTIALS);
  const action = useAction();
  const submit = () =>
    action.run(async () => onSignedIn(await api.post<Session>('/auth/login', credentials)));
  return (
    <Page title="Sign in">
      <Form label="Sign in" onSubmit={submit} class="form narrow">
        <CredentialFields value={credentials} onValue={setCredentials} error={action.error} />
        <Submit action={action}>Sign in</Submit>
      </Form>
      <p>
        New here? <a href={href('/sign-up')}>Create an account</a>
      </p>
    </Page>
  );
}
