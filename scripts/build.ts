// The package's builds: ESM in dist/ (with the CLI) and CommonJS in dist/cjs/, whose own
// package.json tells Node and TypeScript that its .js and .d.ts files are CommonJS; and, for Node's
// `import`, the ESM build bundled into a few files in dist/node/ (entries `.`, `./machines`,
// `./testing` and `./devtools` share chunks, so each class exists once): loading ~40 small modules cost a fresh
// process 25–70 ms more than one bundle (measured on the 2-core machine), which is cold start.
// Dependencies stay external; the source maps chain back to src/*.ts.
import { execFileSync } from 'node:child_process';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { build } from 'esbuild';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync('dist', { recursive: true, force: true });
for (const config of ['tsconfig.build.json', 'tsconfig.cli.json', 'tsconfig.cjs.json']) {
  execFileSync(process.execPath, [tsc, '-p', config], { stdio: 'inherit' });
}
writeFileSync('dist/cjs/package.json', '{ "type": "commonjs" }\n');

// U9: zod/mini is inlined into the one ESM module that imports it (dist/src/validation.js),
// tree-shaken to what the edge checks use (about 14 KB). Left as an import, an app's bundler puts
// every zod module it shares with the SDK's lazily loaded OAuth chunk (full zod, all its locales)
// into the chunk the page loads at once: measured, the browser bundle went from 121 to 550 KiB.
// On Node the ESM bundle below inherits the inlined copy (no ~250 zod modules to load); the
// CommonJS build keeps `require('zod/mini')` (zod is a dependency).
await build({
  entryPoints: ['dist/src/validation.js'],
  outfile: 'dist/src/validation.js',
  allowOverwrite: true,
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  mainFields: ['module', 'main'],
  // Not minified: minifying drops zod's `/* @__PURE__ */` marks, and an app's bundler could then no
  // longer drop what the root entry does not use (measured: 144.1 KiB instead of 139.9).
  sourcemap: true,
  logLevel: 'warning',
});
chmodSync('dist/src/devtools/cli/main.js', 0o755);

await build({
  entryPoints: ['dist/src/node.js', 'dist/machines/index.js', 'dist/src/testing.js', 'dist/src/devtools/index.js'],
  outdir: 'dist/node',
  outbase: 'dist',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  packages: 'external',
  sourcemap: true,
  chunkNames: 'chunks/[name]-[hash]',
  logLevel: 'warning',
});
