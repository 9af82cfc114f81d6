// Everything the package offers, for this repository's own code and tests, which import the
// source. Published entries: universal.ts (`@licensing/client`) and server.ts (`/server`).

export * from './server.js';
