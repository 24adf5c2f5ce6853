/**
 * Module resolve hook (registered by `preload.ts`): inside `@modelcontextprotocol/conformance`,
 * `fs` / `node:fs` resolve to `fs-with-glob.ts`, which adds the `globSync` Node 20 lacks.
 * Every other importer gets the real `node:fs`.
 */
import type { ResolveHook } from 'node:module';

const shim = new URL('./fs-with-glob.ts', import.meta.url).href;
const packageDir = '/node_modules/@modelcontextprotocol/conformance/';

export const resolve: ResolveHook = (specifier, context, nextResolve) => {
  if ((specifier === 'fs' || specifier === 'node:fs') && context.parentURL?.includes(packageDir) === true) {
    return nextResolve(shim, context); // through the TypeScript loader (tsx) registered before this hook
  }
  return nextResolve(specifier, context);
};
