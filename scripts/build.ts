// The package's builds: ESM in dist/ (with the CLI) and CommonJS in dist/cjs/, whose own
// package.json tells Node and TypeScript that its .js and .d.ts files are CommonJS; and, for Node's
// `import`, the ESM build bundled into a few files in dist/node/ (entries `.`, `./machines`,
// `./testing` and `./devtools` share chunks, so each class exists once): loading ~40 small modules cost a fresh
// process 25–70 ms more than one bundle (measured on the 2-core machine), which is cold start.
// Dependencies stay external (zod/mini is bundled into dist/node, below); the source maps chain
// back to src/*.ts.
import { execFileSync } from 'node:child_process';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

// npm pack and npm run build say what they do: each step names itself as it starts and says how long it
// took, on stderr (`npm pack --json` keeps its stdout for the JSON: scripts/pack-test.ts reads it).
const began = performance.now();
async function stepOf<T>(what: string, run: () => T | Promise<T>): Promise<T> {
  console.error(`» build: ${what}`);
  const at = performance.now();
  const result = await run();
  console.error(`  done in ${((performance.now() - at) / 1_000).toFixed(1)} s`);
  return result;
}

await stepOf('clean dist/', () => {
  rmSync('dist', { recursive: true, force: true });
});
const builds = {
  'tsconfig.build.json': 'ESM and types (tsc -p tsconfig.build.json → dist/)',
  'tsconfig.cli.json': 'the CLI (tsc -p tsconfig.cli.json → dist/src/devtools/cli/)',
  'tsconfig.cjs.json': 'CommonJS (tsc -p tsconfig.cjs.json → dist/cjs/)',
};
for (const [config, what] of Object.entries(builds)) {
  await stepOf(what, () => {
    execFileSync(process.execPath, [tsc, '-p', config], { stdio: 'inherit' });
  });
}
writeFileSync('dist/cjs/package.json', '{ "type": "commonjs" }\n');

// U9: the ESM build a bundler reads (dist/src) keeps `import * as z from 'zod/mini'` in
// dist/src/validation.js, so an app's bundler shares zod's core with the SDK `Client`'s own zod
// (both SDK generations import `zod/v4`, which is built on the same `zod/v4/core`): measured with
// `npm run size`, the page's code with the 1.x Client went from 124.2 to 119.4 KiB gzip (2.x: 119.8
// to 115.3), the transport alone unchanged (45.5). It was inlined before, when the OAuth glue
// imported the SDK by name and a bundler moved every zod module that lazy chunk shared into the
// eager one (121 -> 550 KiB); the glue no longer names the SDK (`sdkAuth`), and the lazily loaded
// modules import nothing of the eager graph (test/unit/doors.test.ts), zod included.
chmodSync('dist/src/devtools/cli/main.js', 0o755);

await stepOf('the bundle Node imports (esbuild → dist/node/)', () =>
  build({
    entryPoints: ['dist/src/node.js', 'dist/machines/index.js', 'dist/src/testing.js', 'dist/src/devtools/index.js'],
    outdir: 'dist/node',
    outbase: 'dist',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Dependencies stay external, except zod: the few zod/mini functions the edge checks use are
    // bundled in (tree-shaken), so Node loads no ~250 zod modules at start (cold start).
    plugins: [
      {
        name: 'external-but-zod',
        setup(build) {
          build.onResolve({ filter: /^[^./]/ }, (args) =>
            args.kind === 'entry-point' || /^zod(\/|$)/.test(args.path) ? undefined : { path: args.path, external: true },
          );
        },
      },
    ],
    sourcemap: true,
    chunkNames: 'chunks/[name]-[hash]',
    logLevel: 'warning',
  }),
);
console.error(`✓ build done in ${((performance.now() - began) / 1_000).toFixed(1)} s: dist/ (ESM, CommonJS, the CLI, dist/node)`);
