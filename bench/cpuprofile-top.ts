/**
 * Summarises a `node --cpu-prof` profile: the top self-time frames in this project's code
 * (src/, machines/) and in xstate, plus where the rest of the time went, by area.
 *
 *   node --import tsx bench/cpuprofile-top.ts <file.cpuprofile> [--top=10] [--window=FROM-TO[,FROM-TO…]] [--ops=N]
 *
 * --window keeps only the samples inside the measured windows (µs on the monotonic clock; run.ts
 * prints them under --cpu-prof), --ops adds a per-operation column (µs per call/notification/session).
 *
 * V8 reports positions in the code it ran: tsx's transform of the TypeScript source, one line per
 * file. They are mapped back to TypeScript lines with the source maps in tsx's transform cache
 * (os.tmpdir()/tsx-<uid>), choosing the cached version whose function names sit at the profiled
 * positions; where no version fits, the position is shown as `@col N` of the transformed code.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { join, relative } from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const projectDir = fileURLToPath(new URL('..', import.meta.url));

type Area = 'src' | 'machines' | 'xstate' | 'sdk' | 'undici/node' | 'eventsource-parser' | 'zod' | 'bench' | 'gc' | 'idle' | 'other';

function areaOf(frame: CallFrame): Area {
  const url = frame.url;
  if (frame.functionName === '(garbage collector)') return 'gc';
  if (frame.functionName === '(idle)') return 'idle';
  if (url.includes('/node_modules/xstate/')) return 'xstate';
  if (url.includes('/node_modules/@modelcontextprotocol/')) return 'sdk';
  if (url.includes('/node_modules/eventsource-parser/')) return 'eventsource-parser';
  if (url.includes('/node_modules/zod/')) return 'zod';
  if (url.startsWith('node:') || url === '') return 'undici/node';
  if (url.includes('/node_modules/')) return 'other';
  const path = url.startsWith('file://') ? fileURLToPath(url) : url;
  const rel = relative(projectDir, path);
  if (rel.startsWith('src/')) return 'src';
  if (rel.startsWith('machines/')) return 'machines';
  if (rel.startsWith('bench/')) return 'bench';
  return 'other';
}

interface Transformed {
  code: string;
  /** Per generated line: segments [generatedColumn, originalLine] sorted by column. */
  lines: [number, number][][];
  mtime: number;
}

const base64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** Decodes a source map's `mappings` into [generatedColumn, originalLine] segments per generated line. */
function decodeMappings(mappings: string): [number, number][][] {
  const lines: [number, number][][] = [];
  let originalLine = 0;
  for (const line of mappings.split(';')) {
    const segments: [number, number][] = [];
    let column = 0;
    for (const segment of line.split(',')) {
      if (segment === '') continue;
      const fields: number[] = [];
      let value = 0;
      let shift = 0;
      for (const char of segment) {
        const digit = base64.indexOf(char);
        value += (digit & 31) << shift;
        if (digit & 32) {
          shift += 5;
        } else {
          fields.push(value & 1 ? -(value >>> 1) : value >>> 1);
          value = 0;
          shift = 0;
        }
      }
      column += fields[0] ?? 0;
      if (fields.length >= 4) {
        originalLine += fields[2] ?? 0;
        segments.push([column, originalLine]);
      }
    }
    lines.push(segments);
  }
  return lines;
}

/** tsx's cached transforms, by source path. */
function tsxCache(): Map<string, Transformed[]> {
  const out = new Map<string, Transformed[]>();
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  const dir = join(os.tmpdir(), `tsx-${String(uid)}`);
  let files: string[] = [];
  try {
    files = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of files) {
    const path = join(dir, name);
    try {
      const entry = JSON.parse(readFileSync(path, 'utf8')) as { code?: unknown; map?: unknown };
      if (typeof entry.code !== 'string') continue;
      const map = (typeof entry.map === 'string' ? JSON.parse(entry.map) : entry.map) as { sources?: string[]; mappings?: string } | undefined;
      const source = map?.sources?.[0];
      if (source === undefined || typeof map?.mappings !== 'string') continue;
      const list = out.get(source) ?? [];
      list.push({ code: entry.code, lines: decodeMappings(map.mappings), mtime: statSync(path).mtimeMs });
      out.set(source, list);
    } catch {
      // not a transform entry
    }
  }
  return out;
}

/** For each profiled project file, the cached transform whose function names fit the profile best. */
function chooseTransforms(nodes: ProfileNode[]): Map<string, Transformed> {
  const cache = tsxCache();
  const chosen = new Map<string, Transformed>();
  const byFile = new Map<string, CallFrame[]>();
  for (const { callFrame } of nodes) {
    if (!callFrame.url.startsWith('file://') || callFrame.url.includes('/node_modules/')) continue;
    const list = byFile.get(callFrame.url) ?? [];
    list.push(callFrame);
    byFile.set(callFrame.url, list);
  }
  for (const [url, frames] of byFile) {
    const candidates = cache.get(fileURLToPath(url)) ?? [];
    let best: Transformed | undefined;
    let bestScore = 0;
    for (const candidate of candidates) {
      let score = 0;
      for (const f of frames) {
        const name = f.functionName.split('.').pop() ?? '';
        // V8 puts a function at its parameter list: the name ends there; an arrow's list starts there.
        if (name !== '' && candidate.code.slice(f.columnNumber - name.length, f.columnNumber) === name) score += 2;
        else if (name === '' && f.columnNumber > 0 && candidate.code[f.columnNumber] === '(') score++;
      }
      if (score > bestScore || (score === bestScore && best !== undefined && candidate.mtime > best.mtime)) {
        best = candidate;
        bestScore = score;
      }
    }
    if (best !== undefined && bestScore > 0) chosen.set(url, best);
  }
  return chosen;
}

function originalLine(transformed: Transformed, line: number, column: number): number | undefined {
  const segments = transformed.lines[line];
  if (segments === undefined) return undefined;
  let found: number | undefined;
  for (const [col, orig] of segments) {
    if (col > column) break;
    found = orig;
  }
  return found === undefined ? undefined : found + 1;
}

let transforms = new Map<string, Transformed>();

function location(frame: CallFrame): string {
  const url = frame.url;
  if (url.includes('/node_modules/')) return `${url.slice(url.lastIndexOf('/node_modules/') + 14)}:${frame.lineNumber + 1}`;
  if (!url.startsWith('file://')) return `${url}:${frame.lineNumber + 1}`;
  const file = relative(projectDir, fileURLToPath(url));
  const transformed = transforms.get(url);
  const line = transformed === undefined ? undefined : originalLine(transformed, frame.lineNumber, frame.columnNumber);
  return line === undefined ? `${file}:${frame.lineNumber + 1}@col ${frame.columnNumber}` : `${file}:${line}`;
}

interface FrameTime {
  name: string;
  where: string;
  area: Area;
  selfMs: number;
}

interface ProfileSummary {
  totalMs: number;
  byArea: Record<string, number>;
  frames: FrameTime[];
  /** xstate self time, by the nearest calling frame in src/ or machines/. */
  xstateEntries: FrameTime[];
}

function frameKey(frame: CallFrame): { key: string; name: string; where: string } {
  const name = frame.functionName === '' ? '(anonymous)' : frame.functionName;
  const where = location(frame);
  return { key: `${name}@${where}:${String(frame.columnNumber)}`, name, where };
}

function summarize(profile: CpuProfile, windows: [number, number][]): ProfileSummary {
  transforms = chooseTransforms(profile.nodes);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0;
    t += delta;
    if (windows.length > 0 && !windows.some(([from, to]) => t >= from && t <= to)) continue;
    const id = profile.samples[i] ?? -1;
    self.set(id, (self.get(id) ?? 0) + delta);
  }
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const frames = new Map<string, FrameTime>();
  const entries = new Map<string, FrameTime>();
  const byArea: Record<string, number> = {};
  let totalUs = 0;
  for (const [id, us] of self) {
    const node = byId.get(id);
    if (node === undefined) continue;
    const frame = node.callFrame;
    const area = areaOf(frame);
    totalUs += us;
    byArea[area] = (byArea[area] ?? 0) + us / 1000;
    const { key, name, where } = frameKey(frame);
    const entry = frames.get(key) ?? { name, where, area, selfMs: 0 };
    entry.selfMs += us / 1000;
    frames.set(key, entry);
    if (area !== 'xstate') continue;
    let up = parent.get(id);
    while (up !== undefined) {
      const caller = byId.get(up);
      if (caller === undefined) break;
      const callerArea = areaOf(caller.callFrame);
      if (callerArea === 'src' || callerArea === 'machines') {
        const k = frameKey(caller.callFrame);
        const e = entries.get(k.key) ?? { name: k.name, where: k.where, area: callerArea, selfMs: 0 };
        e.selfMs += us / 1000;
        entries.set(k.key, e);
        break;
      }
      up = parent.get(up);
    }
  }
  const sorted = (m: Map<string, FrameTime>) => [...m.values()].sort((a, b) => b.selfMs - a.selfMs);
  return { totalMs: totalUs / 1000, byArea, frames: sorted(frames), xstateEntries: sorted(entries) };
}

function main(): void {
  const file = process.argv[2];
  if (file === undefined) {
    console.error('usage: node --import tsx bench/cpuprofile-top.ts <file.cpuprofile> [--top=10]');
    process.exit(2);
  }
  const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  const top = Number(arg('top') ?? '10');
  const ops = Number(arg('ops') ?? 'NaN');
  const windows = (arg('window') ?? '')
    .split(',')
    .filter((w) => w !== '')
    .map((w) => w.split('-').map(Number) as [number, number]);
  const summary = summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, windows);
  const busy = summary.totalMs - (summary.byArea.idle ?? 0);
  const pct = (ms: number) => `${((ms / busy) * 100).toFixed(1)}%`;
  const perOp = Number.isFinite(ops) && ops > 0;
  const per = (ms: number) => (perOp ? ` | ${((ms * 1000) / ops).toFixed(1)}` : '');
  const perHead = perOp ? ' | µs/op' : '';
  const perRule = perOp ? ' | ---' : '';
  console.log(`profile: ${file}${windows.length > 0 ? ` (measured window${windows.length > 1 ? 's' : ''} only)` : ''}`);
  console.log(`sampled ${summary.totalMs.toFixed(0)} ms, busy (not idle) ${busy.toFixed(0)} ms${perOp ? `, ${String(ops)} ops` : ''}\n`);
  console.log(`self time by area:\n| area | ms | % of busy${perHead} |\n| --- | --- | ---${perRule} |`);
  for (const [area, ms] of Object.entries(summary.byArea).sort((a, b) => b[1] - a[1])) {
    if (area !== 'idle') console.log(`| ${area} | ${ms.toFixed(1)} | ${pct(ms)}${per(ms)} |`);
  }
  const ours = summary.frames.filter((f) => f.area === 'src' || f.area === 'machines' || f.area === 'xstate');
  console.log(`\ntop ${top} self-time frames in src/, machines/ and xstate:`);
  console.log(`| # | self ms | % of busy${perHead} | function | where |\n| --- | --- | ---${perRule} | --- | --- |`);
  ours.slice(0, top).forEach((f, i) => {
    console.log(`| ${i + 1} | ${f.selfMs.toFixed(1)} | ${pct(f.selfMs)}${per(f.selfMs)} | ${f.name} | ${f.where} |`);
  });
  console.log(`\nxstate self time by the nearest calling frame in src/ or machines/ (top ${top}):`);
  console.log(`| # | xstate ms | % of busy${perHead} | called from | where |\n| --- | --- | ---${perRule} | --- | --- |`);
  summary.xstateEntries.slice(0, top).forEach((f, i) => {
    console.log(`| ${i + 1} | ${f.selfMs.toFixed(1)} | ${pct(f.selfMs)}${per(f.selfMs)} | ${f.name} | ${f.where} |`);
  });
  console.log(`\ntop ${top} self-time frames overall (for context):`);
  summary.frames
    .filter((f) => f.area !== 'idle')
    .slice(0, top)
    .forEach((f, i) => {
      console.log(`  ${String(i + 1).padStart(2)}. ${f.selfMs.toFixed(1).padStart(8)} ms ${pct(f.selfMs).padStart(6)}${perOp ? ` ${((f.selfMs * 1000) / ops).toFixed(1).padStart(7)} µs/op` : ''}  ${f.name}  ${f.where}  [${f.area}]`);
    });
}

main();
