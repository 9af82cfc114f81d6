/** The portal's additions to the checkout stylesheet (served by the checkout host only). */
export const PORTAL_CSS = `
.portal { width: min(720px, 100% - 2rem); }
.portal h2 { font-size: 1.15rem; margin: 1.75rem 0 .5rem; }
.portal h3 { font-size: 1rem; margin: 0 0 .35rem; overflow-wrap: anywhere; }
.portal-head { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center; justify-content: space-between; margin: 0 0 1rem; }
.who { margin: 0; color: var(--muted); overflow-wrap: anywhere; min-width: 0; }
.item { border: 1px solid var(--line); border-radius: 10px; padding: 1rem; margin: 0 0 .75rem; min-width: 0; }
.facts { display: flex; flex-wrap: wrap; gap: .25rem .9rem; margin: 0 0 .75rem; color: var(--muted); font-size: .9rem; }
.status { font-weight: 600; color: var(--ink); }
.status-active, .status-paid { color: var(--ok); }
.status-suspended, .status-revoked, .status-canceled, .status-expired { color: var(--bad); }
code { overflow-wrap: anywhere; word-break: break-all; }
.devices, .orders { list-style: none; padding: 0; margin: 0 0 .75rem; }
.devices li, .orders li { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; justify-content: space-between;
  padding: .5rem 0; border-top: 1px solid var(--line); }
.device, .orders li > span:first-child { display: flex; flex-direction: column; min-width: 0; flex: 1 1 12rem; }
.device .note, .orders .note { margin: .1rem 0 0; }
.device-name { overflow-wrap: anywhere; }
.order-amount { white-space: nowrap; }
form.inline { margin: 0; }
button.small, a.button.small { width: auto; padding: .35rem .9rem; font-size: .9rem; }
.downloads { margin: .75rem 0 0; padding-top: .5rem; border-top: 1px solid var(--line); }
.downloads h4 { font-size: .95rem; margin: 0 0 .35rem; }
.download-refused { margin: 0 0 .5rem; }
.release { margin: 0 0 .5rem; }
.release-head { display: flex; flex-wrap: wrap; gap: .15rem .6rem; align-items: baseline; margin: .25rem 0; }
.release-head .note { margin: 0; }
.channel { font-size: .8rem; font-weight: 600; padding: 0 .45rem; border: 1px solid var(--line); border-radius: 999px; }
.release-notes { white-space: pre-wrap; overflow-wrap: anywhere; margin: .35rem 0; }
.files { list-style: none; padding: 0; margin: 0; }
.files li { display: flex; flex-wrap: wrap; gap: .5rem; align-items: center; justify-content: space-between;
  padding: .5rem 0; border-top: 1px solid var(--line); }
.file { display: flex; flex-direction: column; min-width: 0; flex: 1 1 14rem; }
.file .note { margin: .1rem 0 0; }
.file-name { overflow-wrap: anywhere; }
details { margin-top: .5rem; } summary { cursor: pointer; color: var(--accent); font-weight: 600; }
textarea { width: 100%; padding: .65rem .75rem; border: 1px solid var(--line); border-radius: 8px; background: var(--card); color: var(--ink);
  font: .85rem/1.4 ui-monospace, Menlo, Consolas, monospace; margin: .3rem 0 .75rem; resize: vertical; }
.notice { overflow-wrap: anywhere; }
.key-label { font-weight: 600; margin: 0 0 .3rem; }
.key { margin: 0 0 .75rem; padding: .55rem .75rem; border: 1px solid var(--line); border-radius: 8px; background: var(--soft); }
/* A key breaks only between its groups: one line where it fits, two on a phone. */
.license-key { font: .9rem/1.5 ui-monospace, Menlo, Consolas, monospace; user-select: all; word-break: normal; }
.portal + .secure { padding: 0 1rem; text-align: center; }
@media (max-width: 30rem) { .item { padding: .75rem; } .key { padding: .5rem; } }
`;
