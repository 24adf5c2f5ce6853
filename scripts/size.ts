/**
 * `npm run size`: how big and how quick to load this transport is, next to the SDK's.
 *   - Browser bundle of the transport alone (esbuild, minified, ESM, platform browser), raw and gzip;
 *     then the SDK `Client` with each transport, as an app ships them: 1.x Client with this
 *     transport and with the 1.x SDK transport, 2.x Client with this transport and with the 2.x one.
 *   - Cold start: a fresh Node process imports the SDK Client and the transport, connects to the
 *     SDK's server on 127.0.0.1 and calls one tool; the time from process start to that result,
 *     median of 10 processes each, alternating ours and the SDK's.
 * Needs `npm run build` first (the script `size` does it).
 */
import { build } from 'esbuild';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { startServer } from '../test/support/mcp-server.js';
import { eagerChunks } from './eager-chunks.js';

const root = process.cwd();
const work = mkdtempSync(join(tmpdir(), 'mcp-xstate-size-'));
const ours = pathToFileURL(join(root, 'dist/src/index.js')).href;
/** What Node resolves the package to (the `node` export condition: requests through node:http). */
const oursOnNode = pathToFileURL(join(root, 'dist/node/src/node.js')).href;
/** `--cold-only`: skip the bundle sizes. */
const coldOnly = process.argv.includes('--cold-only');
const sdkDir = join(root, 'node_modules/@modelcontextprotocol/sdk/dist/esm');
const sdkTransport = pathToFileURL(join(sdkDir, 'client/streamableHttp.js')).href;
const sdkClient = pathToFileURL(join(sdkDir, 'client/index.js')).href;

interface Size {
  name: string;
  /** What a page loads for the transport: the entry and the chunks it imports statically. */
  raw: number;
  gzip: number;
  /** How many files the page loads at once (a bundler splits the eager code when a lazy chunk shares some of it). */
  eagerFiles: number;
  /** Chunks loaded only by a dynamic import, by what loads them: the chart engine, the OAuth flow, telemetry, the legacy stream, DPoP. */
  lazy: { what: string; raw: number; gzip: number }[];
}

/** Which feature a lazily loaded chunk serves, by the modules in it. */
function lazyKind(inputs: string[]): string {
  if (inputs.some((input) => input.endsWith('src/engine.js'))) return 'the chart engine (on start())';
  if (inputs.some((input) => input.includes('telemetry/otel'))) return 'telemetry';
  if (inputs.some((input) => input.includes('legacy/stream'))) return 'legacy stream';
  if (inputs.some((input) => input.includes('http/dpop'))) return 'DPoP';
  return 'OAuth (with an authProvider)';
}

const v1Client = `export { Client } from ${JSON.stringify(new URL(sdkClient).pathname)};\n`;
const v2Client = "export { Client } from '@modelcontextprotocol/client';\n";
const transportFrom = (from: string) =>
  `export { StreamableHTTPClientTransport } from ${JSON.stringify(from.startsWith('file:') ? new URL(from).pathname : from)};\n`;

/** The transport alone (or with `extra`, the Client), bundled with code splitting, as an app's bundler would. */
async function bundleSize(name: string, from: string, extra = ''): Promise<Size> {
  const entry = join(root, `.size-${name.replace(/\W/g, '-')}-entry.mjs`);
  writeFileSync(entry, `${extra}${transportFrom(from)}`);
  try {
    return await bundle(name, entry);
  } finally {
    rmSync(entry, { force: true });
  }
}

async function bundle(name: string, entry: string): Promise<Size> {
  const outdir = join(work, `${name.replace(/\W/g, '-')}-out`);
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    splitting: true,
    outdir,
    write: false,
    metafile: true,
    logLevel: 'error',
  });
  const contents = new Map(result.outputFiles.map((file) => [file.path, file.contents]));
  const outputs = result.metafile.outputs;
  // Every chunk not imported statically from the entry is loaded lazily.
  const eager = eagerChunks(outputs);
  const sum = (paths: string[]) => {
    const files = paths.map((path) => contents.get(join(root, path)) ?? contents.get(path) ?? new Uint8Array());
    return { raw: files.reduce((n, f) => n + f.byteLength, 0), gzip: files.reduce((n, f) => n + gzipSync(f, { level: 9 }).byteLength, 0) };
  };
  const all = Object.keys(outputs).filter((path) => path.endsWith('.js'));
  const eagerSize = sum([...eager]);
  const lazy = new Map<string, string[]>();
  for (const path of all.filter((chunk) => !eager.has(chunk))) {
    const what = lazyKind(Object.keys(outputs[path]?.inputs ?? {}));
    lazy.set(what, [...(lazy.get(what) ?? []), path]);
  }
  return {
    name,
    raw: eagerSize.raw,
    gzip: eagerSize.gzip,
    eagerFiles: eager.size,
    lazy: [...lazy].map(([what, paths]) => ({ what, ...sum(paths) })),
  };
}

function child(name: string, transportUrl: string): string {
  const file = join(work, `${name}-cold.mjs`);
  writeFileSync(
    file,
    `const { Client } = await import(${JSON.stringify(sdkClient)});
const { StreamableHTTPClientTransport } = await import(${JSON.stringify(transportUrl)});
const client = new Client({ name: 'cold', version: '1' });
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2])));
const result = await client.callTool({ name: 'echo', arguments: { text: 'x' } });
const ms = performance.now();
const cpu = process.cpuUsage();
if (result.content[0].text !== 'x') throw new Error('wrong answer');
await client.close();
console.log(ms.toFixed(1), ((cpu.user + cpu.system) / 1000).toFixed(1));
`,
  );
  return file;
}

/** Wall-clock ms from process start to the first tool result, and the process's CPU ms by then. */
function runChild(file: string, url: string): Promise<{ wall: number; cpu: number }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [file, url], { timeout: 60_000 }, (error, stdout) => {
      if (error !== null) reject(new Error(`cold-start child failed: ${error.message}`));
      const [wall, cpu] = stdout.trim().split(' ').map(Number);
      resolve({ wall: wall ?? NaN, cpu: cpu ?? NaN });
    });
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
};

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

try {
  const sizes = coldOnly
    ? []
    : [
        await bundleSize('this transport', ours),
        await bundleSize('SDK transport', sdkTransport),
        await bundleSize('Client 1.x + this transport', ours, v1Client),
        await bundleSize('Client 1.x + SDK transport', sdkTransport, v1Client),
        await bundleSize('Client 2.x + this transport', ours, v2Client),
        await bundleSize('Client 2.x + SDK transport', '@modelcontextprotocol/client', v2Client),
      ];
  if (!coldOnly)
    console.log(
      'browser bundle of StreamableHTTPClientTransport, alone and with the Client (esbuild --bundle --minify --splitting, ESM, browser):',
    );
  for (const size of sizes) {
    const lazy = size.lazy.map((chunk) => `${chunk.what} ${kib(chunk.gzip)}`).join(', ');
    console.log(
      `  ${size.name.padEnd(28)} ${kib(size.raw).padStart(10)}  ${kib(size.gzip).padStart(9)} gzip in ${size.eagerFiles} file(s)${lazy === '' ? '' : `; later, only when used (gzip): ${lazy}`}`,
    );
  }

  const rounds = Number(process.env.SIZE_ROUNDS ?? 10);
  const server = await startServer();
  try {
    const files = { ours: child('ours', oursOnNode), sdk: child('sdk', sdkTransport) };
    const times: { ours: { wall: number; cpu: number }[]; sdk: { wall: number; cpu: number }[] } = { ours: [], sdk: [] };
    for (let i = 0; i < rounds; i++) {
      times.ours.push(await runChild(files.ours, server.url.href));
      times.sdk.push(await runChild(files.sdk, server.url.href));
    }
    console.log(`cold start: process start → import → connect → first tool result, median of ${rounds} fresh processes each:`);
    console.log("  (wall clock from process start; CPU: the process's user + system time by then, steadier on a busy machine)");
    for (const [name, runs] of [
      ['this transport', times.ours],
      ['SDK transport', times.sdk],
    ] as const) {
      const wall = median(runs.map((r) => r.wall));
      const cpu = median(runs.map((r) => r.cpu));
      console.log(
        `  ${name.padEnd(16)} ${wall.toFixed(0).padStart(6)} ms wall  ${cpu.toFixed(0).padStart(6)} ms CPU   (wall: ${runs.map((r) => r.wall.toFixed(0)).join(', ')})`,
      );
    }
  } finally {
    await server.close();
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
