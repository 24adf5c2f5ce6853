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
