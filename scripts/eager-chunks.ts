/**
 * The chunks a page loads before anything runs: esbuild's entry chunk and every chunk it imports
 * statically, transitively (a dynamic `import()` is loaded later). Shared by `npm run size`
 * (scripts/size.ts) and the page study (scripts/studies/page-delta.ts), so both count the same.
 */
import type { Metafile } from 'esbuild';

export function eagerChunks(outputs: Metafile['outputs']): Set<string> {
  const entryPath = Object.keys(outputs).find((path) => outputs[path]?.entryPoint !== undefined);
  if (entryPath === undefined) throw new Error('no entry chunk');
  const eager = new Set<string>();
  const visit = (path: string) => {
    if (eager.has(path)) return;
    eager.add(path);
    for (const imported of outputs[path]?.imports ?? []) if (imported.kind === 'import-statement') visit(imported.path);
  };
  visit(entryPath);
  return eager;
}
