export { createAuthenticator } from './authenticator.js';
