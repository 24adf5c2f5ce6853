/**
 * The package's entry on Node (the `node` export condition): the public API of `index.ts`, with
 * requests made through `node:http` when the caller passes no `fetch` (H11). Browsers and
 * bundlers for the web get `index.ts`, which never imports a Node module (U5).
 */
import { registerFastClient } from './http/client.js';
import { nodeHttpClient } from './http/node.js';

registerFastClient(nodeHttpClient);

export * from './index.js';
