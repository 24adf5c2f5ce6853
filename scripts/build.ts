// The package's two builds: ESM in dist/ (with the CLI) and CommonJS in dist/cjs/, whose own
// package.json tells Node and TypeScript that its .js and .d.ts files are CommonJS.
import { execFileSync } from 'node:child_process';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
rmSync('dist', { recursive: true, force: true });
for (const config of ['tsconfig.build.json', 'tsconfig.cli.json', 'tsconfig.cjs.json']) {
  execFileSync(process.execPath, [tsc, '-p', config], { stdio: 'inherit' });
}
writeFileSync('dist/cjs/package.json', '{ "type": "commonjs" }\n');
chmodSync('dist/src/cli/main.js', 0o755);
