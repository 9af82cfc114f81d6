export { registerUserRoutes } from './routes.js';
export { createUserService, type UserService } from './service.js';
export { TIERS, tierAtLeast } from './tiers.js';
export { createUserTokenSigner, type UserTokenSigner } from './user-token.js';
