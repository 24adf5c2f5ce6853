/**
 * Module resolve hook (registered by `preload.ts`): inside `@modelcontextprotocol/conformance`
 * (0.1.16) and its 0.2 alias `@modelcontextprotocol/conformance-next`, `fs` / `node:fs` resolve
 * to `fs-with-glob.ts`, which adds the `globSync` Node 20 lacks. Every other importer gets the
 * real `node:fs`.
 */
import type { ResolveHook } from 'node:module';

const shim = new URL('./fs-with-glob.ts', import.meta.url).href;
const packageDirs = ['/node_modules/@modelcontextprotocol/conformance/', '/node_modules/@modelcontextprotocol/conformance-next/'];

export const resolve: ResolveHook = (specifier, context, nextResolve) => {
  if ((specifier === 'fs' || specifier === 'node:fs') && packageDirs.some((dir) => context.parentURL?.includes(dir) === true)) {
    return nextResolve(shim, context); // through the TypeScript loader (tsx) registered before this hook
  }
  return nextResolve(specifier, context);
};
