/**
 * Where the cold start goes (issue 32: "for each row that is not met, where the time goes"). A
 * study: `npm run size`'s cold-start child, timed phase by phase in fresh processes, alternating
 * this transport (its Node entry, dist/node) and the SDK's 1.x transport:
 *   import the 1.x `Client` → import the transport → connect (initialize) → the first tool result.
 * Then the parts of this transport's import, each in a fresh process after the `Client` is loaded:
 * xstate, `node:http`, Node's own fetch module (what touching `globalThis.Headers` loads; this
 * transport's Node entry does it at load, H11), and the entry itself after those three.
 *   npm run build && node --import tsx scripts/studies/cold-phases.ts [--rounds=10]
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startServer } from '../../test/support/mcp-server.js';

const root = process.cwd();
const rounds = Number(process.argv.find((a) => a.startsWith('--rounds='))?.slice('--rounds='.length) ?? 10);
const work = mkdtempSync(join(tmpdir(), 'mcp-xstate-cold-'));
const sdkDir = join(root, 'node_modules/@modelcontextprotocol/sdk/dist/esm');
const client = pathToFileURL(join(sdkDir, 'client/index.js')).href;
const transports = {
  this: pathToFileURL(join(root, 'dist/node/src/node.js')).href,
  sdk: pathToFileURL(join(sdkDir, 'client/streamableHttp.js')).href,
};
/** xstate as Node resolves it for this package (its `import` condition). */
const xstate = pathToFileURL(join(root, 'node_modules/xstate/dist/xstate.cjs.mjs')).href;

const phases = ['Client import', 'transport import', 'connect', 'first call'] as const;
const phasesChild = join(work, 'phases.mjs');
writeFileSync(
  phasesChild,
  `const at = [performance.now()];
const { Client } = await import(${JSON.stringify(client)});
at.push(performance.now());
const { StreamableHTTPClientTransport } = await import(process.argv[3]);
at.push(performance.now());
const client = new Client({ name: 'cold', version: '1' });
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2])));
at.push(performance.now());
const result = await client.callTool({ name: 'echo', arguments: { text: 'x' } });
at.push(performance.now());
if (result.content[0].text !== 'x') throw new Error('wrong answer');
await client.close();
console.log(JSON.stringify(at.slice(1).map((t, i) => t - at[i])));
`,
);
const parts = ['xstate', 'node:http', "Node's fetch module (globalThis.Headers)", 'this transport after those'] as const;
const partsChild = join(work, 'parts.mjs');
writeFileSync(
  partsChild,
  `await import(${JSON.stringify(client)});
const at = [performance.now()];
await import(${JSON.stringify(xstate)}); at.push(performance.now());
await import('node:http'); at.push(performance.now());
if (typeof globalThis.Headers !== 'function') throw new Error('no Headers'); at.push(performance.now());
await import(${JSON.stringify(transports.this)}); at.push(performance.now());
console.log(JSON.stringify(at.slice(1).map((t, i) => t - at[i])));
`,
);

function run(args: string[]): Promise<number[]> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, args, { timeout: 60_000 }, (error, stdout) => {
      if (error !== null) reject(new Error(`cold-phases child failed: ${error.message}`));
      else resolve(JSON.parse(stdout.trim()) as number[]);
    });
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[mid] ?? NaN) : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
};
const column = (runs: number[][], i: number) =>
  median(runs.map((r) => r[i] ?? NaN))
    .toFixed(1)
    .padStart(7);

const server = await startServer();
try {
  const runs: Record<'this' | 'sdk' | 'parts', number[][]> = { this: [], sdk: [], parts: [] };
  for (let i = 0; i < rounds; i++) {
    runs.this.push(await run([phasesChild, server.url.href, transports.this]));
    runs.sdk.push(await run([phasesChild, server.url.href, transports.sdk]));
    runs.parts.push(await run([partsChild]));
  }
  console.log(`cold start by phase, ms, median of ${rounds} fresh processes each (alternating):`);
  console.log(`  ${'phase'.padEnd(18)} ${'this'.padStart(7)} ${'SDK'.padStart(7)}`);
  phases.forEach((phase, i) => {
    console.log(`  ${phase.padEnd(18)} ${column(runs.this, i)} ${column(runs.sdk, i)}`);
  });
  console.log("this transport's import in parts, ms (fresh processes, the Client loaded first):");
  parts.forEach((part, i) => {
    console.log(`  ${part.padEnd(42)} ${column(runs.parts, i)}`);
  });
} finally {
  await server.close();
  rmSync(work, { recursive: true, force: true });
}
