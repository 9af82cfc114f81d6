import { createHash } from 'node:crypto';

/**
 * Before first paint, the colour scheme the seller chose in the dashboard (light or dark; with
 * none the stylesheet follows the system's). components/theme.tsx keeps the choice under the
 * same key. The page's only inline script, allowed by its hash in the policy below.
 */
export const THEME_SCRIPT =
  "try{var t=localStorage.getItem('dashboard.theme');if(t==='light'||t==='dark')document.documentElement.dataset.theme=t}catch(e){}";

/**
 * The one HTML page of the dashboard: everything else is drawn by the script, which routes on
 * the URL's hash (#/apps/…), so the server needs no route per screen. No inline style, and no
 * inline script but the hashed THEME_SCRIPT, so the page's policy can forbid the rest.
 */
export const DASHBOARD_SHELL = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<meta name="color-scheme" content="light dark">
<title>Seller dashboard</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<script>${THEME_SCRIPT}</script>
<link rel="stylesheet" href="/dashboard/assets/app.css">
<script type="module" src="/dashboard/assets/app.js"></script>
</head>
<body>
<div id="root"><noscript><p>The seller dashboard needs JavaScript.</p></noscript></div>
</body>
</html>
`;

const themeScriptHash = createHash('sha256').update(THEME_SCRIPT).digest('base64');

/** Only this host's own files and API; no page may frame it. */
export const DASHBOARD_POLICY = [
  "default-src 'none'",
  `script-src 'self' 'sha256-${themeScriptHash}'`,
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');
