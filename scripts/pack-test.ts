/**
 * The package as a user gets it (U6, U7): `npm pack`, then the tarball installed into a scratch
 * project outside the repository, offline, and used from there:
 *   - the file list: what must ship (both builds, types, the sources the maps point at, LICENSE,
 *     CHANGELOG) and what must not (tests, bench, scripts, examples);
 *   - the README's quick start, run as ESM (.mjs) and as CommonJS (.cjs, the same code with
 *     require), against the SDK's real server on 127.0.0.1;
 *   - the quick start type-checked by tsc under `nodenext` (ESM and CommonJS files), `node16`
 *     and `bundler`;
 *   - the installed `bin`: `npx mcp-xstate-transport --help` and a real session.
 * Offline: the scratch project gets a package-lock.json copied from this repository's lock (the
 * SDK, TypeScript and our runtime dependencies, with their integrity), so `npm install --offline`
 * takes every tarball from the npm cache that `npm ci` filled. CI reaches only the npm registry.
 *
 *   npm run test:pack            (builds, packs, installs, runs; prints one line per check)
 */
import { execFile, execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { startServer } from '../test/support/mcp-server.js';

const root = process.cwd();
const keep = process.argv.includes('--keep');
const work = mkdtempSync(join(tmpdir(), 'mcp-xstate-pack-'));
let failures = 0;
let lastCheck = performance.now();

function check(name: string, ok: boolean, detail = ''): void {
  const seconds = ((performance.now() - lastCheck) / 1000).toFixed(1);
  lastCheck = performance.now();
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name} (${seconds} s)${ok || detail === '' ? '' : `\n     ${detail.split('\n').join('\n     ')}`}`);
  if (!ok) failures++;
}

/** Runs a command without blocking this process (the MCP server answers from it meanwhile). */
function run(
  command: string,
  args: string[],
  cwd: string,
  timeoutMs = 120_000,
): Promise<{ ok: boolean; out: string; status: number | null }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd, encoding: 'utf8', timeout: timeoutMs, env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false' } },
      (error, stdout, stderr) => {
        const status = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ ok: status === 0, out: `${stdout}${stderr}`.trim(), status });
      },
    );
  });
}

// 1. Pack, and check the file list.
interface PackResult {
  filename: string;
  files: { path: string }[];
  size: number;
  unpackedSize: number;
}
const packed = JSON.parse(
  execFileSync('npm', ['pack', '--json', '--pack-destination', work], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  }),
) as PackResult[];
const pack = packed[0];
if (pack === undefined) throw new Error('npm pack reported nothing');
const tarball = join(work, pack.filename);
const files = new Set(pack.files.map((f) => f.path));
console.log(
  `packed ${pack.filename}: ${files.size} files, ${(pack.size / 1024).toFixed(0)} KiB (${(pack.unpackedSize / 1024).toFixed(0)} KiB unpacked)`,
);

const required = [
  'package.json',
  'README.md',
  'LICENSE',
  'CHANGELOG.md',
  'dist/src/index.js',
  'dist/src/index.d.ts',
  'dist/machines/index.js',
  'dist/machines/index.d.ts',
  'dist/cjs/package.json',
  'dist/cjs/src/index.js',
  'dist/cjs/src/index.d.ts',
  'dist/cjs/machines/index.js',
  'dist/src/devtools/cli/main.js',
  'dist/node/src/node.js',
  'dist/node/machines/index.js',
];
const missing = required.filter((file) => !files.has(file));
check('the tarball has both builds, their types, the bin, LICENSE and CHANGELOG', missing.length === 0, `missing: ${missing.join(', ')}`);
const unwanted = [...files].filter(
  (file) => /^(test|bench|scripts|examples|coverage|\.ci)\//.test(file) || /\.(test|spec)\.|tsbuildinfo$/.test(file),
);
check('no tests, bench, scripts or examples in the tarball', unwanted.length === 0, unwanted.join(', '));
// Every source map names files that ship, or carries the text itself (the zod/mini code bundled
// into dist/node, U9), so stack traces and debuggers find them.
const mapProblems: string[] = [];
for (const file of [...files].filter((f) => f.endsWith('.map'))) {
  const map = JSON.parse(readFileSync(join(root, file), 'utf8')) as { sources: string[]; sourcesContent?: (string | null)[] };
  map.sources.forEach((source, index) => {
    const target = posix.normalize(posix.join(posix.dirname(file), source));
    const embedded = typeof map.sourcesContent?.[index] === 'string' && target.includes('node_modules/zod/');
    if (!files.has(target) && !embedded) mapProblems.push(`${file} → ${target}`);
  });
}
check('every source map resolves to a source in the tarball', mapProblems.length === 0, mapProblems.slice(0, 5).join('\n'));

// 2. A scratch project with the tarball installed offline.
const app = join(work, 'app');
mkdirSync(app);
const rootPackage = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
};
interface LockEntry {
  version?: string;
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  dev?: boolean;
  peer?: boolean;
  optional?: boolean;
  devOptional?: boolean;
  link?: boolean;
}
const rootLock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
/** The lock path a dependency `name` of the package at `from` resolves to, as Node would find it. */
function resolveIn(from: string, name: string): string | undefined {
  for (
    let base = from;
    ;
    base = base.includes('node_modules/') ? base.slice(0, base.lastIndexOf('node_modules/')).replace(/\/$/, '') : ''
  ) {
    const candidate = `${base === '' ? '' : `${base}/`}node_modules/${name}`;
    if (rootLock.packages[candidate] !== undefined) return candidate;
    if (base === '') return undefined;
  }
}
const wanted: Record<string, string> = {
  '@modelcontextprotocol/sdk': rootPackage.devDependencies['@modelcontextprotocol/sdk'] ?? '*',
  // The README's quick start uses the v2 SDK Client (E2).
  '@modelcontextprotocol/client': rootPackage.devDependencies['@modelcontextprotocol/client'] ?? '*',
  typescript: rootPackage.devDependencies.typescript ?? '*',
  '@types/node': rootPackage.devDependencies['@types/node'] ?? '*',
};
const closure = new Set<string>();
const queue = [...Object.keys(wanted), ...Object.keys(rootPackage.dependencies)].map((name) => resolveIn('', name));
while (queue.length > 0) {
  const path = queue.pop();
  if (path === undefined || closure.has(path)) continue;
  closure.add(path);
  const entry = rootLock.packages[path] ?? {};
  for (const name of Object.keys({ ...entry.dependencies, ...entry.optionalDependencies })) queue.push(resolveIn(path, name));
}
const lockPackages: Record<string, LockEntry> = { '': { dependencies: wanted } };
for (const path of [...closure].sort()) {
  const { dev: _dev, devOptional: _devOptional, peer: _peer, ...entry } = rootLock.packages[path] ?? {};
  lockPackages[path] = entry;
}
writeFileSync(join(app, 'package.json'), `${JSON.stringify({ name: 'scratch-app', private: true, dependencies: wanted }, null, 2)}\n`);
writeFileSync(
  join(app, 'package-lock.json'),
  `${JSON.stringify({ name: 'scratch-app', lockfileVersion: 3, requires: true, packages: lockPackages }, null, 2)}\n`,
);
const install = await run('npm', ['install', '--offline', '--no-audit', '--no-fund', tarball], app, 300_000);
check('npm install --offline of the tarball into a scratch project', install.ok, install.out);
if (!install.ok) finish();
check('npm install shows no engine warning', !/EBADENGINE/.test(install.out), install.out);

// 3. The README's quick start, as ESM and as CommonJS, against the SDK's server.
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const quickStart = /## Quick start[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
if (quickStart === undefined) throw new Error('README has no Quick start code block');
const server = await startServer();
try {
  const url = server.url.href;
  const code = quickStart.replace('http://127.0.0.1:3000/mcp', url);
  const imports = code.split('\n').filter((line) => line.startsWith('import '));
  const body = code
    .split('\n')
    .filter((line) => !line.startsWith('import '))
    .join('\n');
  const esm = `${code}\nconsole.log(JSON.stringify(tools.map((t) => t.name)));\n`;
  const requires = imports.map((line) => line.replace(/^import \{ (.+) \} from '(.+)';$/, "const { $1 } = require('$2');"));
  const cjs = `${requires.join('\n')}\n(async () => {\n${body}\nconsole.log(JSON.stringify(tools.map((t) => t.name)));\n})().catch((e) => { console.error(e); process.exit(1); });\n`;
  writeFileSync(join(app, 'quick.mjs'), esm);
  writeFileSync(join(app, 'quick.cjs'), cjs);
  for (const file of ['quick.mjs', 'quick.cjs']) {
    const before = server.closedSessions.length;
    const result = await run(process.execPath, [file], app, 30_000);
    check(
      `the README quick start runs as ${file.endsWith('.mjs') ? 'ESM' : 'CommonJS'} (${file})`,
      result.ok && result.out.includes('"echo"'),
      result.out,
    );
    check(`  … and its close() ended the session with DELETE`, server.closedSessions.length === before + 1);
  }
  const requireType = await run(
    process.execPath,
    [
      '-e',
      "const t = require('mcp-xstate-transport'); const m = require('mcp-xstate-transport/machines'); if (typeof t.StreamableHTTPClientTransport !== 'function' || typeof m.connectionMachine !== 'object') process.exit(1)",
    ],
    app,
  );
  check("require('mcp-xstate-transport') and require('mcp-xstate-transport/machines')", requireType.ok, requireType.out);
  // Node's import gets the bundle (dist/node/); its entries share chunks, so a class is the same from each.
  const importShared = await run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      "const t = await import('mcp-xstate-transport'); const m = await import('mcp-xstate-transport/machines'); const x = await import('mcp-xstate-transport/testing'); const d = await import('mcp-xstate-transport/devtools'); if (!import.meta.resolve('mcp-xstate-transport').includes('/dist/node/') || t.StreamableHTTPError !== m.StreamableHTTPError || typeof x.transportIn !== 'function' || typeof d.createJsonlRecorder !== 'function' || typeof d.inspectLive !== 'function') process.exit(1)",
    ],
    app,
  );
  check("import of '.', './machines', './testing' and './devtools' on Node: the bundle, one class each", importShared.ok, importShared.out);

  // A browser app that installed neither SDK generation bundles the package (it never names an
  // optional peer where a bundler resolves it; OAuth there takes the sdkAuth option): esbuild in a
  // project that links only the package and its browser dependencies (jose: DPoP, loaded only when
  // on; zod: the edge checks' zod/mini, shared with the Client's zod where an app has one).
  const bare = join(work, 'bundle-app');
  mkdirSync(join(bare, 'node_modules'), { recursive: true });
  for (const name of ['mcp-xstate-transport', 'xstate', 'eventsource-parser', 'jose', 'zod']) {
    symlinkSync(join(app, 'node_modules', name), join(bare, 'node_modules', name), 'dir');
  }
  const bundled = await build({
    stdin: { contents: "export { StreamableHTTPClientTransport } from 'mcp-xstate-transport';", resolveDir: bare },
    absWorkingDir: bare,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    splitting: true,
    outdir: join(bare, 'out'),
    preserveSymlinks: true,
    write: false,
    logLevel: 'silent',
  }).then(
    (result) => ({ ok: result.errors.length === 0, out: '' }),
    (error: unknown) => ({ ok: false, out: error instanceof Error ? error.message : String(error) }),
  );
  check('esbuild bundles the root for the browser in an app with neither SDK installed', bundled.ok, bundled.out);

  // 4. Types under nodenext (ESM and CommonJS files), node16 and bundler.
  const tsQuick = code;
  const tsCjs = `${imports.join('\n')}\nexport async function main(): Promise<string[]> {\n${body}\nreturn tools.map((t) => t.name);\n}`;
  writeFileSync(join(app, 'quick.mts'), `${tsQuick}\nexport const names: string[] = tools.map((t) => t.name);\n`);
  writeFileSync(
    join(app, 'quick.cts'),
    `${tsCjs}\nimport { SessionExpiredError, MessageTooLargeError, StreamIdleError } from 'mcp-xstate-transport';\nimport { connectionMachine } from 'mcp-xstate-transport/machines';\nexport const checks: unknown[] = [SessionExpiredError, MessageTooLargeError, StreamIdleError, connectionMachine];\n`,
  );
  writeFileSync(join(app, 'quick-bundler.ts'), `${tsQuick}\nexport const names: string[] = tools.map((t) => t.name);\n`);
  const tsc = join(app, 'node_modules', 'typescript', 'bin', 'tsc');
  // Our declarations alone, without the SDK: checked with skipLibCheck off under node16 (the
  // strictest about CommonJS and ESM in .d.ts files). The quick start with the SDK (whose own
  // .d.ts do not all pass every mode) with skipLibCheck: a resolution failure still shows there.
  const ours = `import { StreamableHTTPClientTransport, SessionExpiredError, MessageTooLargeError, StreamIdleError, type StreamableHTTPClientTransportOptions } from 'mcp-xstate-transport';
import { connectionMachine } from 'mcp-xstate-transport/machines';
const options: StreamableHTTPClientTransportOptions = { reconnectionOptions: { maxRetries: 2 }, terminateOnClose: false };
export const transport = new StreamableHTTPClientTransport(new URL('${url}'), options);
export const tagged: boolean = transport.actor.getSnapshot().hasTag('connected');
export const classes = [SessionExpiredError, MessageTooLargeError, StreamIdleError] as const;
export const machine = connectionMachine;
`;
  writeFileSync(join(app, 'ours.mts'), ours);
  writeFileSync(join(app, 'ours.cts'), ours);
  writeFileSync(join(app, 'ours-bundler.ts'), ours);
  const common = ['--noEmit', '--strict', '--target', 'es2022', '--types', 'node'];
  const cases: [string, string[], string[]][] = [
    [
      'nodenext',
      ['--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck'],
      ['quick.mts', 'quick.cts', 'ours.mts', 'ours.cts'],
    ],
    ['bundler', ['--module', 'esnext', '--moduleResolution', 'bundler', '--skipLibCheck'], ['quick-bundler.ts', 'ours-bundler.ts']],
    [
      'node16 (our declarations, skipLibCheck off)',
      ['--module', 'node16', '--moduleResolution', 'node16', '--skipLibCheck', 'false'],
      ['ours.mts', 'ours.cts'],
    ],
  ];
  for (const [name, args, files] of cases) {
    const result = await run(process.execPath, [tsc, ...common, ...args, ...files], app, 300_000);
    check(`tsc under ${name}: ${files.join(', ')}`, result.ok, result.out);
  }

  // 5. The installed bin.
  const npx = (...args: string[]) => run('npx', ['--offline', '--no-install', 'mcp-xstate-transport', ...args], app, 30_000);
  const help = await npx('--help');
  check('npx mcp-xstate-transport --help', help.ok && help.out.includes('usage: mcp-xstate-transport'), help.out);
  const session = await npx(url, '--call', 'echo', '--args', '{"text":"from the tarball"}');
  check(
    'npx mcp-xstate-transport <url> --call echo',
    session.ok && session.out.includes('from the tarball') && session.out.includes('closed'),
    session.out,
  );
  const bad = await npx('not a url');
  check('npx mcp-xstate-transport with a bad URL exits 2', bad.status === 2, `${bad.status}: ${bad.out}`);
} finally {
  await server.close();
}
finish();

function finish(): never {
  if (keep) console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
  console.log(failures === 0 ? 'pack test: all checks passed' : `pack test: ${failures} check(s) failed`);
  process.exit(failures === 0 ? 0 : 1);
}
