/**
 * The overlay checkout: a script a seller's site loads from the checkout host (`/overlay.js`),
 * which opens the hosted checkout in a dialog over the seller's page, and the script the checkout
 * pages load inside that frame to tell the page how the purchase went. Framing itself is allowed
 * only to the origins the seller listed (frame-ancestors); both scripts also check origins: the
 * frame posts only to a listed origin that is its parent, the page takes messages only from the
 * checkout host's origin and from its own frame.
 */

/** The frame's name starts with this, followed by the embedding page's origin. */
const FRAME_NAME = 'licensing-checkout ';
/** What every message between the two carries, so neither mistakes another script's messages. */
const MESSAGE_SOURCE = 'licensing-checkout';

/** Served as /overlay.js on the checkout host; seller sites load it with a plain script tag. */
export const OVERLAY_JS = `/* Overlay checkout: see docs/branding.md */
(function () {
  'use strict';
  var script = document.currentScript;
  if (!script || !script.src) return;
  var checkoutOrigin = new URL(script.src).origin;
  var current = null;

  function emit(type, detail) {
    document.dispatchEvent(new CustomEvent('licensing-checkout:' + type, { detail: detail }));
  }

  function style(element, rules) {
    for (var name in rules) element.style.setProperty(name, rules[name]);
  }

  function close(reason) {
    if (!current) return;
    var open = current;
    current = null;
    window.removeEventListener('message', open.onMessage);
    if (open.dialog.open) open.dialog.close();
    open.dialog.remove();
    var detail = { productId: open.productId, reason: open.completed ? 'completed' : reason };
    emit('close', detail);
    if (open.options.onClose) open.options.onClose(detail);
  }

  function openCheckout(productId, options) {
    options = options || {};
    if (!/^[0-9a-fA-F-]{36}$/.test(String(productId))) throw new Error('LicensingCheckout.open needs a product id');
    close('replaced');
    var url = checkoutOrigin + '/checkout/' + encodeURIComponent(productId);
    if (options.payload) url += '?payload=' + encodeURIComponent(options.payload);

    var dialog = document.createElement('dialog');
    dialog.setAttribute('aria-label', options.title || 'Checkout');
    style(dialog, { position: 'fixed', inset: '0', width: '100vw', height: '100vh', 'max-width': 'none',
      'max-height': 'none', margin: '0', padding: '0', border: '0', background: 'rgba(15, 18, 30, 0.55)',
      display: 'flex', 'align-items': 'center', 'justify-content': 'center' });
    var frame = document.createElement('iframe');
    frame.name = '${FRAME_NAME}' + window.location.origin;
    frame.title = options.title || 'Checkout';
    frame.allow = 'payment';
    frame.src = url;
    style(frame, { width: 'min(480px, 100vw)', height: 'min(780px, calc(100vh - 32px))', border: '0',
      'border-radius': '12px', background: '#f4f6fb', 'box-shadow': '0 12px 40px rgba(0, 0, 0, 0.35)' });
    var shut = document.createElement('button');
    shut.type = 'button';
    shut.textContent = '\\u00d7';
    shut.setAttribute('aria-label', 'Close checkout');
    style(shut, { position: 'absolute', top: '12px', right: '12px', width: '40px', height: '40px',
      'border-radius': '50%', border: '0', background: '#fff', color: '#1a1f36', 'font-size': '24px',
      'line-height': '1', cursor: 'pointer' });
    shut.addEventListener('click', function () { close('closed'); });
    dialog.appendChild(frame);
    dialog.appendChild(shut);
    // Escape, or the browser's own way to dismiss a modal dialog.
    dialog.addEventListener('cancel', function (event) { event.preventDefault(); close('closed'); });

    var opened = { productId: productId, options: options, dialog: dialog, completed: false, onMessage: null };
    opened.onMessage = function (event) {
      if (event.origin !== checkoutOrigin || event.source !== frame.contentWindow) return;
      var data = event.data;
      if (!data || data.source !== '${MESSAGE_SOURCE}') return;
      if (data.type === 'success') {
        opened.completed = true;
        emit('success', data.detail);
        if (options.onSuccess) options.onSuccess(data.detail);
      } else if (data.type === 'cancel') {
        close('canceled');
      }
    };
    window.addEventListener('message', opened.onMessage);
    current = opened;
    document.body.appendChild(dialog);
    dialog.showModal();
    emit('open', { productId: productId });
  }

  window.LicensingCheckout = { open: openCheckout, close: function () { close('closed'); } };

  // <button data-licensing-checkout="PRODUCT_ID" data-payload="…">Buy</button> works without code.
  document.addEventListener('click', function (event) {
    var target = event.target && event.target.closest ? event.target.closest('[data-licensing-checkout]') : null;
    if (!target) return;
    event.preventDefault();
    openCheckout(target.getAttribute('data-licensing-checkout'), {
      payload: target.getAttribute('data-payload') || undefined,
    });
  });
})();
`;

/**
 * Loaded by checkout pages of sellers who list overlay origins. It does nothing unless the page
 * is framed by one of those origins: then the receipt tells the page the purchase succeeded, and
 * the cancel link asks it to close the overlay instead of leaving.
 */
export const OVERLAY_FRAME_JS = `
(function () {
  'use strict';
  if (window.parent === window) return;
  var listed = (document.body.getAttribute('data-overlay-origins') || '').split(' ').filter(Boolean);
  // The browser's own record of the embedder where it keeps one; the name the overlay gave otherwise.
  var ancestors = window.location.ancestorOrigins;
  var named = window.name.indexOf('${FRAME_NAME}') === 0 ? window.name.slice(${FRAME_NAME.length}) : '';
  var parentOrigin = ancestors && ancestors.length > 0 ? ancestors[0] : named;
  if (!parentOrigin || listed.indexOf(parentOrigin) === -1) return;
  // targetOrigin: delivered only if the parent really is that origin.
  function tell(type, detail) {
    window.parent.postMessage({ source: '${MESSAGE_SOURCE}', type: type, detail: detail || {} }, parentOrigin);
  }
  var result = document.getElementById('overlay-result');
  if (result) {
    tell('success', {
      productId: result.getAttribute('data-product-id'),
      transactionId: result.getAttribute('data-transaction-id'),
      licenseKey: result.getAttribute('data-license-key'),
      email: result.getAttribute('data-email') || null,
    });
  }
  var cancel = document.getElementById('cancel');
  if (cancel) cancel.addEventListener('click', function (event) { event.preventDefault(); tell('cancel'); });
  // The way on to the seller's success address leaves the overlay for the whole window.
  var onward = document.getElementById('continue');
  if (onward) onward.setAttribute('target', '_top');
})();
`;
