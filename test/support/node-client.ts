/**
 * Vitest setup of the default project: the transport as Node users get it (the `node` export
 * condition), with requests through `node:http` (H11). The `fetch` project runs without it.
 */
import '../../src/node.js';
