import { useEffect, useState } from 'preact/hooks';

/** Where the choice is kept. The page's first script (src/dashboard/shell.ts) reads the same key. */
const KEY = 'dashboard.theme';

const CHOICES = [
  ['system', 'System'],
  ['light', 'Light'],
  ['dark', 'Dark'],
] as const;
type Theme = (typeof CHOICES)[number][0];

function storedTheme(): Theme {
  try {
    const value = localStorage.getItem(KEY);
    return value === 'light' || value === 'dark' ? value : 'system';
  } catch {
    return 'system';
  }
}

/** The stylesheet follows the system's setting unless data-theme names light or dark. */
function apply(theme: Theme) {
  if (theme === 'system') delete document.documentElement.dataset.theme;
  else document.documentElement.dataset.theme = theme;
}

/** System, light or dark: applied at once, remembered in this browser, followed by its other tabs. */
export function ThemeSwitch() {
  const [theme, setTheme] = useState(storedTheme);
  useEffect(() => {
    const onStorage = (event: StorageEvent) => {
      if (event.key !== KEY && event.key !== null) return;
      const next = storedTheme();
      setTheme(next);
      apply(next);
    };
    addEventListener('storage', onStorage);
    return () => removeEventListener('storage', onStorage);
  }, []);
  const choose = (next: Theme) => {
    setTheme(next);
    apply(next);
    try {
      if (next === 'system') localStorage.removeItem(KEY);
      else localStorage.setItem(KEY, next);
    } catch {
      // Storage can be disabled; the choice then lasts as long as the page.
    }
  };
  return (
    <label class="theme-switch">
      Theme{' '}
      <select value={theme} onChange={(event) => choose(event.currentTarget.value as Theme)}>
        {CHOICES.map(([value, label]) => (
          <option key={value} value={value}>
            {label}
          </option>
        ))}
      </select>
    </label>
  );
}
