import { type ComponentChildren, Fragment } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { type ApiError, api, configureApi } from './api';
import { StatusProvider, useAnnounce } from './components/status';
import { ThemeSwitch } from './components/theme';
import { AccountsPage } from './pages/accounts';
import { AnalyticsPage } from './pages/analytics';
import { AppDetailPage } from './pages/app-detail';
import { AppsPage } from './pages/apps';
import { BrandPage } from './pages/brand';
import { DisputeDetailPage, DisputesPage } from './pages/disputes';
import { LicenseDetailPage } from './pages/license-detail';
import { LicensesPage } from './pages/licenses';
import { OrderDetailPage, OrdersPage } from './pages/orders';
import { OverviewPage } from './pages/overview';
import { ProductEditPage } from './pages/product-edit';
import { ProductsPage } from './pages/products';
import { ReleaseDetailPage } from './pages/release-detail';
import { ReleasesPage } from './pages/releases';
import { SignInPage } from './pages/sign-in';
import { SignUpPage } from './pages/sign-up';
import { SubscriptionsPage } from './pages/subscriptions';
import { WebhookDetailPage } from './pages/webhook-detail';
import { WebhooksPage } from './pages/webhooks';
import { href, match, navigate, screenOf, useHashPath } from './router';
import { storedToken, storeToken } from './session';
import { SessionContext, type SignedIn } from './session-context';
import type { User } from './types';

type Screen = (params: Record<string, string>) => ComponentChildren;

/** The first screen after sign-in. */
const HOME = '/overview';

/** Screens of a signed-in user, first match wins. */
const SCREENS: [string, Screen][] = [
  ['/overview', () => <OverviewPage />],
  ['/apps', () => <AppsPage />],
  ['/apps/:appId', (p) => <AppDetailPage appId={p.appId ?? ''} />],
  ['/licenses', () => <LicensesPage />],
  ['/apps/:appId/licenses', (p) => <LicensesPage appId={p.appId} />],
  [
    '/apps/:appId/licenses/:licenseId',
    (p) => <LicenseDetailPage appId={p.appId ?? ''} licenseId={p.licenseId ?? ''} />,
  ],
  ['/apps/:appId/releases', (p) => <ReleasesPage appId={p.appId ?? ''} />],
  [
    '/apps/:appId/releases/:releaseId',
    (p) => <ReleaseDetailPage appId={p.appId ?? ''} releaseId={p.releaseId ?? ''} />,
  ],
  ['/products', () => <ProductsPage />],
  ['/products/new', () => <ProductEditPage />],
  ['/products/:id', (p) => <ProductEditPage id={p.id} />],
  ['/webhooks', () => <WebhooksPage />],
  ['/webhooks/:id', (p) => <WebhookDetailPage id={p.id ?? ''} />],
  ['/orders', () => <OrdersPage />],
  ['/orders/:id', (p) => <OrderDetailPage id={p.id ?? ''} />],
  ['/subscriptions', () => <SubscriptionsPage />],
  ['/disputes', () => <DisputesPage />],
  ['/disputes/:id', (p) => <DisputeDetailPage id={p.id ?? ''} />],
  ['/brand', () => <BrandPage />],
  ['/admin/analytics', () => <AnalyticsPage />],
  ['/admin/accounts', () => <AccountsPage />],
];

const NAV: { path: string; label: string; admin?: boolean }[] = [
  { path: '/overview', label: 'Overview' },
  { path: '/apps', label: 'Apps' },
  { path: '/products', label: 'Products' },
  { path: '/licenses', label: 'Licenses' },
  { path: '/webhooks', label: 'Webhooks' },
  { path: '/orders', label: 'Orders' },
  { path: '/subscriptions', label: 'Subscriptions' },
  { path: '/disputes', label: 'Disputes' },
  { path: '/brand', label: 'Brand' },
  { path: '/admin/analytics', label: 'Analytics', admin: true },
  { path: '/admin/accounts', label: 'Accounts', admin: true },
];

export function App() {
  return (
    <StatusProvider>
      <Dashboard />
    </StatusProvider>
  );
}

function Dashboard() {
  const path = useHashPath();
  const announce = useAnnounce();
  const [token, setToken] = useState(storedToken);
  const [user, setUser] = useState<User | null>(null);

  const signOut = useCallback(
    (message?: string) => {
      storeToken(null);
      setToken(null);
      setUser(null);
      if (message) announce(message);
      navigate('/sign-in');
    },
    [announce],
  );

  useEffect(() => {
    configureApi({
      token: storedToken,
      unauthorized: () => signOut('Your session has ended. Sign in again.'),
    });
  }, [signOut]);

  // A stored session is checked before any screen shows: the token may have expired (a 401,
  // which signs out through the hook above) or the service may be unreachable (retry).
  const [checkFailed, setCheckFailed] = useState<string | null>(null);
  const [attempt, setAttempt] = useState(0);
  useEffect(() => {
    if (!token || user) return;
    setCheckFailed(null);
    api.get<{ user: User }>('/auth/me').then(
      (me) => setUser(me.user),
      (error: ApiError) => {
        if (error.status !== 401) setCheckFailed(error.message);
      },
    );
  }, [token, user, attempt]);

  const signedIn: SignedIn = useCallback((session) => {
    storeToken(session.token);
    setToken(session.token);
    setUser(session.user);
    navigate(HOME);
  }, []);

  const publicScreen = path === '/sign-in' || path === '/sign-up';
  useEffect(() => {
    if (!token && !publicScreen) navigate('/sign-in');
    if (user && (publicScreen || path === '/')) navigate(HOME);
  }, [token, user, publicScreen, path]);

  if (!token || !user) {
    if (token)
      return (
        <Shell>
          {checkFailed ? (
            <div class="form-error" role="alert">
              <p>{checkFailed}</p>
              <button type="button" class="secondary" onClick={() => setAttempt((n) => n + 1)}>
                Try again
              </button>
            </div>
          ) : (
            <p class="muted">Loading…</p>
          )}
        </Shell>
      );
    return (
      <Shell>
        {path === '/sign-up' ? (
          <SignUpPage key="sign-up" onSignedIn={signedIn} />
        ) : (
          <SignInPage key="sign-in" onSignedIn={signedIn} />
        )}
      </Shell>
    );
  }

  // A list's filters and sort live in the query: changing them keeps the screen (and its focus).
  const screen = screenOf(path);
  const found = SCREENS.map(([pattern, screen]) => ({ params: match(pattern, path), screen })).find(
    (candidate) => candidate.params !== null,
  );
  const adminOnly = path.startsWith('/admin') && user.role !== 'ADMIN';
  return (
    <SessionContext.Provider value={{ user, signOut: () => signOut('You are signed out.') }}>
      <Shell
        nav={<Navigation key={screen} path={screen} user={user} />}
        account={
          <div class="account">
            <span>
              {user.email}{' '}
              <span class="muted">
                ({user.tier}
                {user.role === 'ADMIN' ? ', admin' : ''})
              </span>
            </span>
            <button type="button" class="secondary" onClick={() => signOut('You are signed out.')}>
              Sign out
            </button>
          </div>
        }
      >
        <Fragment key={screen}>
          {found && !adminOnly ? found.screen(found.params ?? {}) : <NotFound />}
        </Fragment>
      </Shell>
    </SessionContext.Provider>
  );
}

function Shell({
  nav,
  account,
  children,
}: {
  nav?: ComponentChildren;
  account?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <div class={nav ? 'layout' : 'layout signed-out'}>
      {/* A button, not a link to #main: in this page the hash names the screen. */}
      <button type="button" class="skip-link" onClick={() => document.getElementById('main')?.focus()}>
        Skip to main content
      </button>
      <header class="top">
        <span class="brand">Seller dashboard</span>
        <ThemeSwitch />
        {account}
      </header>
      {nav}
      <main id="main" tabIndex={-1}>
        {children}
      </main>
    </div>
  );
}

/**
 * The menu. On a wide screen it is a sidebar; on a narrow one it folds into a "Menu" button at
 * the top that opens it (aria-expanded). It is keyed by the path, so moving to a screen folds it
 * again; Escape folds it and gives focus back to the button.
 */
function Navigation({ path, user }: { path: string; user: User }) {
  const [open, setOpen] = useState(false);
  const toggle = useRef<HTMLButtonElement>(null);
  useEffect(() => {
    if (!open) return;
    const onKey = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      setOpen(false);
      toggle.current?.focus();
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [open]);
  const current = (item: string) =>
    path === item ||
    path.startsWith(`${item}/`) ||
    (item === '/licenses' && /^\/apps\/[^/]+\/licenses/.test(path));
  return (
    <div class={open ? 'menu open' : 'menu'}>
      <button
        ref={toggle}
        type="button"
        class="menu-button"
        aria-expanded={open}
        aria-controls="dashboard-menu"
        onClick={() => setOpen(!open)}
      >
        Menu
      </button>
      <nav id="dashboard-menu" class="side" aria-label="Dashboard">
        <ul>
          {NAV.filter((item) => !item.admin || user.role === 'ADMIN').map((item) => {
            const active = current(item.path) && !(item.path === '/apps' && /\/licenses/.test(path));
            return (
              <li key={item.path}>
                <a href={href(item.path)} aria-current={active ? 'page' : undefined}>
                  {item.label}
                </a>
              </li>
            );
          })}
        </ul>
      </nav>
    </div>
  );
}

function NotFound() {
  return (
    <div>
      <h1>Page not found</h1>
      <p>
        There is nothing here. <a href={href(HOME)}>Go to the overview</a>.
      </p>
    </div>
  );
}
