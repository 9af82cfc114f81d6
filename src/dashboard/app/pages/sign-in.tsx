import { useState } from 'preact/hooks';
import { api } from '../api';
import { Form, FormError, TextField } from '../components/form';
import { Page } from '../components/page';
import { useAction } from '../components/use-api';
import { href } from '../router';
import type { SignedIn } from '../session-context';
import type { Session } from '../types';

export function SignInPage({ onSignedIn }: { onSignedIn: SignedIn }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  const submit = () =>
    action.run(async () => onSignedIn(await api.post<Session>('/auth/login', { email, password })));
  return (
    <Page title="Sign in">
      <Form label="Sign in" onSubmit={submit} class="form narrow">
        <TextField
          label="E-mail"
          name="email"
          type="email"
          autoComplete="username"
          required
          value={email}
          onValue={setEmail}
          error={action.error}
        />
        <TextField
          label="Password"
          name="password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onValue={setPassword}
          error={action.error}
        />
        <FormError error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Sign in
        </button>
      </Form>
      <p>
        New here? <a href={href('/sign-up')}>Create an account</a>
      </p>
    </Page>
  );
}
