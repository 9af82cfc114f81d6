/**
 * The one HTML page of the dashboard: everything else is drawn by the script, which routes on
 * the URL's hash (#/apps/…), so the server needs no route per screen. No inline script or style,
 * so the page's policy can forbid both.
 */
export const DASHBOARD_SHELL = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Seller dashboard</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/dashboard/assets/app.css">
<script type="module" src="/dashboard/assets/app.js"></script>
</head>
<body>
<div id="root"><noscript><p>The seller dashboard needs JavaScript.</p></noscript></div>
</body>
</html>
`;

/** Only this host's own files and API; no page may frame it. */
export const DASHBOARD_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');
