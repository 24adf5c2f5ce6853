/**
 * What the page carries for this transport that it does not carry for the SDK's (issue 44, item 3).
 * A study: the two eager bundles `npm run size` compares (the SDK `Client` with this transport, and
 * with the SDK's own), built with the same esbuild settings as scripts/size.ts, then esbuild's
 * metafile read module by module: the minified bytes each input puts in the eager chunks, this
 * bundle's less the SDK one's. Shared code (the `Client`, zod, ajv) cancels out; what is left is
 * what each transport adds.
 * Then each part's gzip share, by removal: the bundle with this transport, built again with that
 * part's modules left out (marked external, so their code is gone and their importers unchanged).
 *   npm run build && node --import tsx scripts/studies/page-delta.ts [--client=2]
 */
import { build, type Metafile, type Plugin } from 'esbuild';
import { dirname, resolve } from 'node:path';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { eagerChunks } from '../eager-chunks.js';

const root = process.cwd();
const v2 = process.argv.includes('--client=2');
const sdkClient = v2
  ? "'@modelcontextprotocol/client'"
  : JSON.stringify(join(root, 'node_modules/@modelcontextprotocol/sdk/dist/esm/client/index.js'));
const transports = {
  ours: JSON.stringify(join(root, 'dist/src/index.js')),
  sdk: v2
    ? "'@modelcontextprotocol/client'"
    : JSON.stringify(join(root, 'node_modules/@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js')),
};

/** Minified bytes per input in the eager chunks (the entry and what it imports statically), and their gzip. */
async function eager(transport: string, without?: RegExp): Promise<{ gzip: number; inputs: Map<string, number> }> {
  const entry = join(root, '.page-delta-entry.mjs');
  writeFileSync(entry, `export { Client } from ${sdkClient};\nexport { StreamableHTTPClientTransport } from ${transport};\n`);
  try {
    const result = await build({
      entryPoints: [entry],
      bundle: true,
      minify: true,
      format: 'esm',
      platform: 'browser',
      splitting: true,
      outdir: join(root, '.page-delta-out'),
      write: false,
      metafile: true,
      logLevel: 'error',
      plugins: without === undefined ? [] : [leaveOut(without)],
    });
    const outputs: Metafile['outputs'] = result.metafile.outputs;
    const seen = eagerChunks(outputs);
    const inputs = new Map<string, number>();
    let gzip = 0;
    for (const path of seen) {
      const file = result.outputFiles.find((output) => output.path === join(root, path));
      gzip += file === undefined ? 0 : gzipSync(file.contents, { level: 9 }).byteLength;
      for (const [input, { bytesInOutput }] of Object.entries(outputs[path]?.inputs ?? {}))
        inputs.set(input, (inputs.get(input) ?? 0) + bytesInOutput);
    }
    return { gzip, inputs };
  } finally {
    rmSync(entry, { force: true });
  }
}

/** Marks as external every module whose path (resolved, or a package's name) matches `pattern`. */
function leaveOut(pattern: RegExp): Plugin {
  return {
    name: 'leave-out',
    setup(on) {
      on.onResolve({ filter: /.*/ }, (args) => {
        if (args.kind === 'entry-point') return undefined;
        const path = args.path.startsWith('.') ? resolve(dirname(args.importer), args.path) : args.path;
        return pattern.test(path) ? { path, external: true } : undefined;
      });
    },
  };
}

/** A module's group: its package, or this project's folder (the connection chart's parts together). */
const groupOf = (input: string) =>
  input.includes('node_modules/')
    ? input.replace(/.*node_modules\/((?:@[^/]+\/)?[^/]+).*/, '$1')
    : input.replace(/^dist\/(machines\/connection|src\/http|src\/sse)\/.*/, '$1').replace(/^dist\//, '');

const ours = await eager(transports.ours);
const sdk = await eager(transports.sdk);
const kb = (bytes: number) => (bytes / 1000).toFixed(1).padStart(6);
const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
console.log(
  `Client ${v2 ? '2.x' : '1.x'}: eager gzip ${kib(ours.gzip)} with this transport, ${kib(sdk.gzip)} with the SDK's (${(ours.gzip / sdk.gzip).toFixed(3)}×; 1.25× is ${kib(sdk.gzip * 1.25)})`,
);
const groups = new Map<string, { ours: number; sdk: number }>();
for (const [input, bytes] of ours.inputs) {
  const group = groups.get(groupOf(input)) ?? { ours: 0, sdk: 0 };
  group.ours += bytes;
  groups.set(groupOf(input), group);
}
for (const [input, bytes] of sdk.inputs) {
  const group = groups.get(groupOf(input)) ?? { ours: 0, sdk: 0 };
  group.sdk += bytes;
  groups.set(groupOf(input), group);
}
const rows = [...groups].filter(([, g]) => g.ours !== g.sdk).sort(([, a], [, b]) => b.ours - b.sdk - (a.ours - a.sdk));
console.log('minified KB in the eager chunks, by package or folder, where the two differ:');
console.log(`  ${'this'.padStart(6)} ${'SDK'.padStart(6)} ${'diff'.padStart(6)}`);
for (const [name, g] of rows) console.log(`  ${kb(g.ours)} ${kb(g.sdk)} ${kb(g.ours - g.sdk)}  ${name}`);
const total = (map: Map<string, number>) => [...map.values()].reduce((n, b) => n + b, 0);
console.log(`  ${kb(total(ours.inputs))} ${kb(total(sdk.inputs))} ${kb(total(ours.inputs) - total(sdk.inputs))}  all`);

console.log('gzip share of each part of this transport, by removal (the eager gzip less the gzip without it):');
const parts: [string, RegExp][] = [
  ['xstate', /^xstate/],
  ['xstate and the charts', /^xstate|\/dist\/machines\//],
  ['the charts (dist/machines)', /\/dist\/machines\//],
  ['the connection chart (dist/machines/connection)', /\/dist\/machines\/connection\//],
  ['the error classes (machines/errors)', /\/dist\/machines\/errors\.js$/],
  ['the HTTP layer (src/http)', /\/dist\/src\/http\//],
  ['the SSE reader and parser (src/sse)', /\/dist\/src\/sse\//],
  ['options, saved state, validation (zod/mini)', /\/dist\/src\/(options|saved-state|validation)\.js$|^zod\/mini/],
  ['redaction', /\/dist\/src\/redaction\.js$/],
  ['the data plane', /\/dist\/src\/data-plane\.js$/],
  ['actors', /\/dist\/src\/actors\.js$/],
];
for (const [name, pattern] of parts) {
  const without = await eager(transports.ours, pattern);
  console.log(`  ${kib(ours.gzip - without.gzip).padStart(9)}  ${name}`);
}
