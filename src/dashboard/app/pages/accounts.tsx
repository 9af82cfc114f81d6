import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api';
import { useConfirm } from '../components/dialog';
import {
  ActionButton,
  Form,
  FormError,
  optionsOf,
  SearchForm,
  SelectField,
  Submit,
  TextField,
} from '../components/form';
import { ListTable, Pager, ResultCount, useOffsetList } from '../components/list';
import { Facts, Loading, Page, Section } from '../components/page';
import { useAnnounce } from '../components/status';
import { useAction } from '../components/use-api';
import { formatDate, formatDateTime } from '../format';
import { useSession } from '../session-context';
import { type OffsetPage, ROLES, type Role, TIERS, type User } from '../types';

type Search = { email: string; role: string; tier: string };
const NO_SEARCH: Search = { email: '', role: '', tier: '' };

const roleName = (role: string) => (role === 'ADMIN' ? 'Administrator' : 'Seller');

/** Every account of the service, for administrators: find one, change its tier or role, close it. */
export function AccountsPage() {
  const { user: me } = useSession();
  const [draft, setDraft] = useState<Search>(NO_SEARCH);
  const accounts = useOffsetList<OffsetPage<'users', User>, Search>('/admin/users', NO_SEARCH);
  const searching = Object.values(accounts.filter).some(Boolean);
  const [selected, setSelected] = useState<User | null>(null);
  const listHeading = useRef<HTMLHeadingElement>(null);

  return (
    <Page title="Accounts">
      <p class="muted">Every seller and administrator of the service. Only administrators see this page.</p>
      <Section title="Find accounts" headingRef={listHeading}>
        <SearchForm
          label="Search accounts"
          onSearch={() => accounts.filterBy({ ...draft, email: draft.email.trim() })}
          onClear={() => {
            setDraft(NO_SEARCH);
            accounts.filterBy(NO_SEARCH);
          }}
        >
          <TextField
            label="E-mail contains"
            name="email"
            autoComplete="off"
            value={draft.email}
            onValue={(email) => setDraft({ ...draft, email })}
          />
          <SelectField
            label="Role"
            name="role"
            value={draft.role}
            options={[{ value: '', label: 'Any role' }, ...optionsOf(ROLES, roleName)]}
            onValue={(role) => setDraft({ ...draft, role })}
          />
          <SelectField
            label="Plan tier"
            name="tier"
            value={draft.tier}
            options={[{ value: '', label: 'Any tier' }, ...optionsOf(TIERS)]}
            onValue={(tier) => setDraft({ ...draft, tier })}
          />
        </SearchForm>
        <Loading state={accounts}>
          {(page) => (
            <>
              <ResultCount
                total={page.total}
                noun={['account', 'accounts']}
                searching={searching}
                none="No account matches this search."
              />
              <ListTable
                caption="Accounts"
                rows={page.users}
                columns={[
                  {
                    title: 'E-mail',
                    cell: (user) => (
                      <>
                        {user.email}
                        {user.id === me.id && <span class="muted"> (you)</span>}
                      </>
                    ),
                  },
                  { title: 'Name', cell: (user) => user.name ?? '—' },
                  { title: 'Role', cell: (user) => roleName(user.role) },
                  { title: 'Plan tier', cell: (user) => user.tier },
                  { title: 'Created', cell: (user) => formatDate(user.createdAt) },
                ]}
                actions={(user) => (
                  <button
                    type="button"
                    class="secondary"
                    aria-pressed={selected?.id === user.id}
                    onClick={() => setSelected(user)}
                  >
                    Manage <span class="visually-hidden">account of {user.email}</span>
                  </button>
                )}
                pager={<Pager label="Accounts" page={page} onOffset={accounts.setOffset} />}
              />
            </>
          )}
        </Loading>
      </Section>
      {selected && (
        <ManageAccount
          key={selected.id}
          account={selected}
          own={selected.id === me.id}
          // An answer that arrives after another account was opened only refreshes the list.
          onChanged={(updated) => {
            setSelected((current) => (current?.id === updated.id ? updated : current));
            accounts.reload();
          }}
          onClosed={() => {
            setSelected((current) => (current?.id === selected.id ? null : current));
            accounts.reload();
            // The panel and the button that opened it are gone: the list is where the user was.
            listHeading.current?.focus();
          }}
        />
      )}
    </Page>
  );
}

/**
 * One account's tier, role and closing. The admin's own account offers neither demotion nor
 * closing (the API refuses both with 409); errors still show next to the action that caused them.
 */
function ManageAccount({
  account,
  own,
  onChanged,
  onClosed,
}: {
  account: User;
  own: boolean;
  onChanged(account: User): void;
  onClosed(): void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  // Keyed by the account, so this runs when an account is chosen: its panel is where work goes on.
  useEffect(() => heading.current?.focus(), []);
  const [tier, setTier] = useState<string>(account.tier);
  const tierAction = useAction();
  const roleAction = useAction();
  const closeAction = useAction();
  const announce = useAnnounce();
  const [confirm, confirmDialog] = useConfirm();
  const path = `/admin/users/${account.id}`;

  const saveTier = () =>
    tierAction.run(async () => {
      const updated = await api.patch<User>(path, { tier });
      announce(`Plan tier of ${updated.email} set to ${updated.tier}`);
      onChanged(updated);
    });

  const changeRole = async () => {
    const role: Role = account.role === 'ADMIN' ? 'SELLER' : 'ADMIN';
    const yes = await confirm(
      role === 'ADMIN'
        ? {
            title: `Make ${account.email} an administrator?`,
            message:
              'They will see every account and the analytics of the whole service, and can change and close other accounts.',
            action: 'Make administrator',
          }
        : {
            title: `Remove the admin role of ${account.email}?`,
            message:
              'They become a seller: the admin area closes to them at once. Their apps and records stay.',
            action: 'Remove admin role',
            danger: true,
          },
    );
    if (!yes) return;
    await roleAction.run(async () => {
      const updated = await api.patch<User>(path, { role });
      announce(`${updated.email} is now ${role === 'ADMIN' ? 'an administrator' : 'a seller'}`);
      onChanged(updated);
    });
  };

  const close = async () => {
    const yes = await confirm({
      title: `Close the account of ${account.email}?`,
      message:
        'Their sessions and API keys stop working at once and they can no longer sign in. Their records (apps, products, licenses, orders) stay. This cannot be undone.',
      action: 'Close account',
      danger: true,
    });
    if (yes && (await closeAction.run(() => api.delete(path)))) {
      announce(`Account of ${account.email} closed`);
      onClosed();
    }
  };

  return (
    <Section title={`Account: ${account.email}`} headingRef={heading}>
      <Facts
        facts={{
          'E-mail': account.email,
          Name: account.name ?? '—',
          Role: roleName(account.role),
          'Plan tier': account.tier,
          Created: formatDateTime(account.createdAt),
          Updated: formatDateTime(account.updatedAt),
        }}
      />
      <Form label="Change the plan tier" class="form inline" onSubmit={saveTier}>
        <SelectField
          label="Plan tier"
          name="tier"
          value={tier}
          options={optionsOf(TIERS)}
          onValue={setTier}
          error={tierAction.error}
        />
        <Submit action={tierAction}>Save tier</Submit>
      </Form>
      {own ? (
        <p class="notice">
          This is your own account: you cannot remove your own admin role or close it. Another administrator
          can.
        </p>
      ) : (
        <>
          <h3>Role</h3>
          <p class="muted">
            {account.role === 'ADMIN'
              ? 'An administrator manages every account and sees the analytics.'
              : 'A seller manages their own apps, products and licenses.'}
          </p>
          <div class="actions">
            <ActionButton
              action={roleAction}
              kind={account.role === 'ADMIN' ? 'danger' : 'secondary'}
              onClick={changeRole}
            >
              {account.role === 'ADMIN' ? 'Remove admin role' : 'Make administrator'}
            </ActionButton>
          </div>
          <FormError error={roleAction.error} />
          <h3>Close the account</h3>
          <p class="muted">Sessions, API keys and sign-in stop working; the account's records stay.</p>
          <div class="actions">
            <ActionButton action={closeAction} kind="danger" onClick={close}>
              Close account
            </ActionButton>
          </div>
          <FormError error={closeAction.error} />
        </>
      )}
      {confirmDialog}
    </Section>
  );
}
