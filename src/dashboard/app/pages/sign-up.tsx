import { useState } from 'preact/hooks';
import { api } from '../api';
import { Form, FormError, TextField } from '../components/form';
import { Page } from '../components/page';
import { useAction } from '../components/use-api';
import { href } from '../router';
import type { SignedIn } from '../session-context';
import type { Session } from '../types';

export function SignUpPage({ onSignedIn }: { onSignedIn: SignedIn }) {
  const [name, setName] = useState('');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const action = useAction();
  const submit = () =>
    action.run(async () =>
      onSignedIn(
        await api.post<Session>('/auth/register', {
          email,
          password,
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
        <TextField
          label="E-mail"
          name="email"
          type="email"
          autoComplete="email"
          required
          value={email}
          onValue={setEmail}
          error={action.error}
        />
        <TextField
          label="Password"
          name="password"
          type="password"
          autoComplete="new-password"
          required
          hint="At least 8 characters."
          value={password}
          onValue={setPassword}
          error={action.error}
        />
        <FormError error={action.error} />
        <button type="submit" class="primary" disabled={action.busy}>
          Create account
        </button>
      </Form>
      <p>
        Already have an account? <a href={href('/sign-in')}>Sign in</a>
      </p>
    </Page>
  );
}
