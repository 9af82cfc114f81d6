export { type Fragment, Html, html, inlineStyleSources, Page } from './html.js';
export { formatPrice, pageShell, sellerHeader } from './pages.js';
export { registerCheckoutRoutes } from './routes.js';
export { type CheckoutService, createCheckoutService } from './service.js';
export { createTrials, type Trials } from './trials.js';
