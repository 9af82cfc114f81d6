export { type AccentColours, accentColours } from './accent.js';
export { type BrandView, brandCss } from './brand-view.js';
export { registerBrandRoutes, registerLogoRoute } from './routes.js';
export { type BrandService, createBrandService } from './service.js';
