/**
 * The checkout pages' stylesheet, served by the checkout host alone (the buyer portal builds on
 * it). Colours come from the variables only: light, or dark when the buyer's system asks for it,
 * each with WCAG AA contrast.
 */
export const CHECKOUT_CSS = `
:root { color-scheme: light dark; --ink: #1a1f36; --muted: #5b6478; --line: #d8dde6; --accent: #3a4bdb; --on-accent: #fff;
  --bad: #b42318; --bad-wash: #fef3f2; --ok: #067647; --page: #f4f6fb; --card: #fff; --soft: #f4f6fb;
  --badge: #fff4d6; --badge-ink: #7a5300; --focus: #9aa6ff; --shadow: rgba(26, 31, 54, .08); }
@media (prefers-color-scheme: dark) {
  :root { --ink: #e6e8f0; --muted: #a6adbf; --line: #3a4154; --accent: #a3adff; --on-accent: #0d1020;
    --bad: #ff9c8f; --bad-wash: #3a1e1c; --ok: #6fd39a; --page: #10131c; --card: #1b2030; --soft: #252b3c;
    --badge: #3d3113; --badge-ink: #f3c969; --focus: #c3cbff; --shadow: rgba(0, 0, 0, .4); }
}
* { box-sizing: border-box; }
body { margin: 0; min-height: 100vh; background: var(--page); color: var(--ink);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; display: flex; flex-direction: column; align-items: center; }
.card { width: min(440px, 100% - 2rem); margin: 3rem 0 1rem; background: var(--card); border: 1px solid var(--line);
  border-radius: 12px; padding: 2rem; box-shadow: 0 8px 24px var(--shadow); }
h1 { font-size: 1.5rem; margin: 0 0 .5rem; }
.description { color: var(--muted); margin: 0 0 1rem; }
.price { margin: 0 0 1.5rem; } .amount { font-size: 1.75rem; font-weight: 700; } .billing { color: var(--muted); }
.badge { display: inline-block; margin: 0 0 .75rem; padding: .1rem .6rem; border-radius: 999px; background: var(--badge); color: var(--badge-ink); font-size: .8rem; font-weight: 600; }
label { display: block; font-weight: 600; margin: 0 0 .3rem; }
input { width: 100%; padding: .65rem .75rem; border: 1px solid var(--line); border-radius: 8px; font: inherit; margin: 0 0 .75rem;
  background: var(--card); color: var(--ink); }
input[readonly] { background: var(--soft); }
input:focus-visible, button:focus-visible, a:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
fieldset { border: 0; padding: 0; margin: 0 0 1rem; } legend { font-weight: 600; margin-bottom: .3rem; padding: 0; }
.note { color: var(--muted); font-size: .875rem; margin: -.4rem 0 .75rem; }
.notice { background: var(--soft); border-radius: 8px; padding: .75rem; }
.error { color: var(--bad); background: var(--bad-wash); border-radius: 8px; padding: .75rem; }
.actions { display: grid; gap: .5rem; }
button, .button { display: block; width: 100%; padding: .8rem; border-radius: 8px; font: inherit; font-weight: 600; text-align: center; cursor: pointer; text-decoration: none; }
.pay { background: var(--accent); color: var(--on-accent); border: 0; }
.secondary { background: var(--card); color: var(--accent); border: 1px solid var(--accent); }
.cancel { text-align: center; margin: 1rem 0 0; } a { color: var(--accent); }
.links { display: flex; flex-wrap: wrap; gap: .25rem 1rem; justify-content: center; margin-top: 1.25rem; font-size: .85rem; }
.license { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: .85rem; }
.secure { color: var(--muted); font-size: .8rem; padding: 0 1rem; text-align: center; }
.trial { border-top: 1px solid var(--line); margin-top: 1.5rem; padding-top: 1rem; } h2 { font-size: 1.1rem; margin: 0 0 .5rem; }
@media (max-width: 30rem) {
  .card { margin-top: 1rem; padding: 1.5rem 1rem; }
  /* A license key shows whole in its field on a 360 px phone. */
  .license { font-size: .8rem; padding-inline: .5rem; }
}
/* The seller's brand. A branded page's (or portal entry's) own style element sets --brand,
   --on-brand (black or white, whichever reads on it) and --brand-ink (the brand readable on white). */
.seller { display: flex; align-items: center; gap: .6rem; margin: 0 0 1rem; font-weight: 600; overflow-wrap: anywhere; min-width: 0; }
.seller-logo { height: 40px; width: auto; max-width: min(200px, 60%); object-fit: contain; }
.seller-small { font-size: .9rem; margin: 0 0 .5rem; } .seller-small .seller-logo { height: 24px; }
.branded .pay { background: var(--brand); color: var(--on-brand); }
.branded .secondary { color: var(--brand-ink); border-color: var(--brand-ink); }
.branded a, .branded summary { color: var(--brand-ink); }
@media (prefers-color-scheme: dark) {
  /* --brand-ink is the brand made readable on white; on the dark page the theme's accent reads. */
  .branded .secondary { color: var(--accent); border-color: var(--accent); }
  .branded a, .branded summary { color: var(--accent); }
}
`;

/**
 * Stripe Elements in deferred-intent mode: the element mounts with the amount, and the intent is
 * made only when the buyer submits. The crypto button keeps the plain form post.
 */
export const CHECKOUT_JS = `
(function () {
  var mount = document.getElementById('payment-element');
  var form = document.getElementById('checkout-form');
  if (!mount || !form || !window.Stripe) return;
  var errorBox = document.getElementById('form-error');
  function show(message) { errorBox.textContent = message; errorBox.hidden = false; }
  var stripe = window.Stripe(mount.dataset.publishableKey);
  var dark = window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches;
  var elements = stripe.elements({ mode: 'payment', amount: Number(mount.dataset.amountMinor), currency: mount.dataset.currency.toLowerCase(),
    appearance: { theme: dark ? 'night' : 'stripe' } });
  elements.create('payment').mount(mount);
  form.addEventListener('submit', function (event) {
    if (event.submitter && event.submitter.value === 'crypto') return;
    event.preventDefault();
    elements.submit().then(function (result) {
      if (result.error) return show(result.error.message);
      var data = new FormData(form);
      return fetch('/api/checkout/payment-intent', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ productId: form.dataset.productId, email: data.get('email') || undefined,
          payload: data.get('payload') || undefined, attempt: data.get('attempt') })
      }).then(function (response) {
        return response.json().then(function (body) {
          if (!response.ok) return show(body.error ? body.error.message : 'The payment could not start.');
          return stripe.confirmPayment({ elements: elements, clientSecret: body.clientSecret,
            confirmParams: { return_url: body.returnUrl } }).then(function (r) { if (r.error) show(r.error.message); });
        });
      });
    });
  });
})();
`;
