/**
 * The package's entry on Node (the `node` export condition): the public API of `index.ts`, with
 * requests made through `node:http` when the caller passes no `fetch` (H11), and a cookie jar
 * for the session (N3). Browsers and bundlers for the web get `index.ts`, which never imports a
 * Node module (U5).
 */
import { registerSender } from './http/client.js';
import { originCookieStore } from './http/cookies.js';
import { nodeSend } from './http/node.js';
import { engine } from './engine.js';
import { registerEngine } from './engine-registry.js';

registerSender((options, viaFetch) => {
  const send = nodeSend(options, viaFetch);
  // N3: cookie affinity on Node, whichever client carries the requests (a browser keeps its own cookies).
  if (options.cookies === false) return { send };
  const jar = originCookieStore(options.endpoint);
  // The jar's own methods, bound: no closure over this function's context per transport.
  return { send: jar.wrap(send), sessionEnded: jar.clear.bind(jar) };
});

// On Node the chart engine is part of the import (cold start loads one graph; `transport.actor` exists from the constructor).
registerEngine(engine);

export * from './index.js';
