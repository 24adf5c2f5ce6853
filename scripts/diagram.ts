/**
 * Draws the statecharts as Mermaid `stateDiagram-v2` by walking the machines' state nodes, so the
 * chart in docs/chart.md is generated from the same machine objects that run.
 *
 *   tsx scripts/diagram.ts           print the chart region
 *   tsx scripts/diagram.ts --write   rewrite docs/chart.md between <!-- chart:start --> and <!-- chart:end -->
 *   tsx scripts/diagram.ts --check   exit 1 when docs/chart.md's copy is not what the machines give
 *
 * The walk is generic: compound, parallel (regions separated by `--`), final and history nodes;
 * transitions from `on`, `after`, `always`, invoke `onDone`/`onError`/`onSnapshot` and state
 * `onDone`. Transitions without a target (actions only) change no state and are not drawn.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AnyStateMachine, AnyStateNode } from 'xstate';
import { connectionMachine } from '../machines/connection/index.js';
import { postStreamMachine } from '../machines/post-stream.js';
import { standaloneStreamMachine } from '../machines/standalone-stream.js';
import { descendants, transitionsOf } from '../src/devtools/chart-model.js';

export const regionStart = '<!-- chart:start -->';
export const regionEnd = '<!-- chart:end -->';
/** The page the chart lives on; the README links to it. */
export const chartPath = fileURLToPath(new URL('../docs/chart.md', import.meta.url));
const chartFile = 'docs/chart.md';

interface Edge {
  from: string;
  to: string;
  label: string;
}

/** Text Mermaid keeps in a label: `:` and `;` end a label, `#` starts a comment. */
function labelText(text: string): string {
  return text
    .replace(/[:;#\r\n]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Mermaid identifiers: word characters only, not reserved, unique within one diagram. */
function idAllocator(): (wanted: string) => string {
  const taken = new Set<string>();
  return (wanted) => {
    let base = wanted.replace(/\W+/g, '_') || 'state';
    // `root` is Mermaid's own document; `default…` is a keyword; `X_start`/`X_end` are its [*] ids.
    if (/^(root$|default)/i.test(base)) base = `s_${base}`;
    if (/_(start|end)$/i.test(base)) base = `${base}_`;
    let id = base;
    for (let n = 2; taken.has(id); n++) id = `${base}_${n}`;
    taken.add(id);
    return id;
  };
}

/** The block an edge between two nodes is written in: their closest common container that is not parallel. */
function edgeHome(source: AnyStateNode, target: AnyStateNode): AnyStateNode {
  const chain = (node: AnyStateNode): AnyStateNode[] => {
    const list: AnyStateNode[] = [];
    for (let n: AnyStateNode | undefined = node.parent; n; n = n.parent) list.push(n);
    return list;
  };
  const targetChain = new Set(chain(target));
  let home = chain(source).find((n) => targetChain.has(n)) ?? source.machine.root;
  while (home.type === 'parallel' && home.parent) home = home.parent;
  return home;
}

/**
 * The Mermaid `stateDiagram-v2` of a machine. Deterministic: it depends only on the machine's
 * definition, walked in document order.
 */
export function machineToMermaid(machine: AnyStateMachine): string {
  const root = machine.root;
  const allocate = idAllocator();
  const ids = new Map(descendants(root).map((node) => [node, allocate(node.path.join('_'))]));
  // The machine itself: a composite around a parallel root, else a pseudo-state for its own transitions.
  const rootId = allocate(root.type === 'parallel' ? machine.id : `${machine.id}_any`);
  const idOf = (node: AnyStateNode): string => {
    if (node === root) return rootId;
    const id = ids.get(node);
    if (id === undefined) throw new Error(`state node ${node.id} is not part of machine ${machine.id}`);
    return id;
  };

  // Every drawn edge, filed under the block it is written in (null: the top level of the diagram).
  const edges = new Map<AnyStateNode | null, Edge[]>();
  let rootHasEdges = false;
  for (const source of [root, ...descendants(root)]) {
    for (const { transition, label } of transitionsOf(source)) {
      for (const target of transition.target ?? []) {
        const edge = { from: idOf(source), to: idOf(target), label: labelText(label) };
        if (source === root) rootHasEdges = true;
        const block = source === root ? null : edgeHome(source, target);
        const home = block === root ? null : block;
        edges.set(home, [...(edges.get(home) ?? []), edge]);
      }
    }
  }

  const lines: string[] = ['stateDiagram-v2'];
  const quote = (text: string) => `"${text.replace(/"/g, "'")}"`;
  const writeEdges = (home: AnyStateNode | null, pad: string) => {
    for (const edge of edges.get(home) ?? []) {
      lines.push(`${pad}${edge.from} --> ${edge.to}${edge.label ? ` : ${edge.label}` : ''}`);
    }
  };

  const writeBody = (node: AnyStateNode, depth: number): void => {
    const pad = '  '.repeat(depth);
    const children = Object.values(node.states);
    if (node.type === 'parallel') {
      children.forEach((region, index) => {
        if (index > 0) lines.push(`${pad}--`);
        writeState(region, depth);
      });
      return;
    }
    for (const initial of node.initial.target) lines.push(`${pad}[*] --> ${idOf(initial)}`);
    for (const child of children) writeState(child, depth);
    if (node === root && rootHasEdges) {
      // Transitions defined on the machine root apply in every state that does not handle the event itself.
      lines.push(`${pad}state "(any state)" as ${rootId}`);
    }
    writeEdges(node === root ? null : node, pad);
    for (const child of children) {
      if (child.type === 'final') lines.push(`${pad}${idOf(child)} --> [*]`);
    }
  };

  const writeState = (node: AnyStateNode, depth: number): void => {
    const pad = '  '.repeat(depth);
    const id = idOf(node);
    const name = node.type === 'history' ? `${node.key} (history)` : node.key;
    const invoked = node.invoke.map((invoke) => (typeof invoke.src === 'string' ? invoke.src : invoke.id));
    const runs = invoked.length > 0 ? labelText(`invoke ${invoked.join(', ')}`) : undefined;
    if (node.type === 'compound' || node.type === 'parallel') {
      // Mermaid allows no description on a composite state: what it runs goes into its title.
      lines.push(`${pad}state ${quote(runs === undefined ? name : `${name} (${runs})`)} as ${id} {`);
      writeBody(node, depth + 1);
      lines.push(`${pad}}`);
      return;
    }
    lines.push(`${pad}state ${quote(name)} as ${id}`);
    if (runs !== undefined) lines.push(`${pad}${id} : ${runs}`);
  };

  if (root.type === 'parallel') {
    // A parallel root has no document of its own to split into regions: draw it as one composite.
    writeState(root, 1);
    writeEdges(null, '  ');
  } else {
    writeBody(root, 1);
  }
  return lines.join('\n');
}

/** Tag → the states that carry it, in document order. */
export function tagsOf(machine: AnyStateMachine): Map<string, string[]> {
  const tags = new Map<string, string[]>();
  for (const node of descendants(machine.root)) {
    for (const tag of node.tags) tags.set(tag, [...(tags.get(tag) ?? []), node.path.join('.')]);
  }
  return tags;
}

/** States of `machine` that invoke the actor registered as `name`. */
function invokedIn(machine: AnyStateMachine, name: string): string[] {
  return descendants(machine.root)
    .filter((node) => node.invoke.some((invoke) => invoke.src === name))
    .map((node) => node.path.join('.'));
}

/** The name under which `child` is registered among `parent`'s actors. */
function actorName(parent: AnyStateMachine, child: AnyStateMachine): string | undefined {
  const actors = parent.implementations.actors as Record<string, unknown>;
  return Object.keys(actors).find((name) => actors[name] === child);
}

const fence = (text: string) => ['```mermaid', text, '```'].join('\n');

/** The chart region: the three charts, the connection chart's tags, and how to read them. */
export function chartRegion(): string {
  const parts: string[] = [
    '<!-- Generated by `npm run diagram` (scripts/diagram.ts) from the machines; edit the machines, not this. -->',
    '',
    `**Connection** (\`${connectionMachine.id}\`, machines/connection/)`,
    '',
    fence(machineToMermaid(connectionMachine)),
    '',
    '| tag | states |',
    '| --- | --- |',
    ...[...tagsOf(connectionMachine)].map(([tag, states]) => `| \`${tag}\` | ${states.map((s) => `\`${s}\``).join(', ')} |`),
  ];
  const children: [AnyStateMachine, string, string][] = [
    [postStreamMachine, 'POST stream', 'machines/post-stream.ts'],
    [standaloneStreamMachine, 'Standalone stream', 'machines/standalone-stream.ts'],
  ];
  for (const [machine, title, file] of children) {
    const name = actorName(connectionMachine, machine);
    const where = name === undefined ? [] : invokedIn(connectionMachine, name);
    const role =
      name === undefined
        ? ''
        : `; the connection chart's actor \`${name}\`${where.length > 0 ? `, invoked in ${where.map((w) => `\`${w}\``).join(', ')}` : ''}`;
    parts.push('', `**${title}** (\`${machine.id}\`, ${file}${role})`, '', fence(machineToMermaid(machine)));
  }
  parts.push(
    '',
    'Reading the charts: an arrow is a transition that changes state; transitions that only run actions ' +
      'are not drawn. `[guard]` names the guard that must pass, `[else]` marks the fallback taken when the ' +
      'guards listed before it fail, `always` is an eventless transition, `after X` fires when the delay `X` ' +
      'has passed, `done(X)` and `error(X)` when the invoked actor `X` finishes or fails. `(any state)` ' +
      'stands for transitions defined on the machine itself: they apply in every state that does not ' +
      'handle the event on its own. `[*]` marks the initial state and, as a target, a final state.',
  );
  return parts.join('\n');
}

/** The text between the chart markers, without the newline that follows the start marker. */
export function readRegion(page: string): string | undefined {
  const text = page.replace(/\r\n/g, '\n');
  const start = text.indexOf(regionStart);
  const end = text.indexOf(regionEnd);
  if (start === -1 || end === -1 || end < start) return undefined;
  return text
    .slice(start + regionStart.length, end)
    .replace(/^\n/, '')
    .replace(/\n$/, '');
}

/** The page's text with the region replaced by `region`. */
export function writeRegion(page: string, region: string): string {
  const text = page.replace(/\r\n/g, '\n');
  const start = text.indexOf(regionStart);
  const end = text.indexOf(regionEnd);
  if (start === -1 || end === -1 || end < start) {
    throw new Error(`${chartFile} has no ${regionStart} … ${regionEnd} region`);
  }
  return `${text.slice(0, start + regionStart.length)}\n${region}\n${text.slice(end)}`;
}

function main(args: string[]): number {
  const region = chartRegion();
  if (args.includes('--write')) {
    const page = readFileSync(chartPath, 'utf8');
    const next = writeRegion(page, region);
    if (next !== page) writeFileSync(chartPath, next);
    console.log(next === page ? `${chartFile}: the chart is current` : `${chartFile}: the chart rewritten`);
    return 0;
  }
  if (args.includes('--check')) {
    const current = readRegion(readFileSync(chartPath, 'utf8'));
    if (current === undefined) {
      console.error(`${chartFile} has no ${regionStart} … ${regionEnd} region`);
      return 1;
    }
    if (current !== region) {
      console.error(`${chartFile}: the chart is stale: run \`npm run diagram\``);
      return 1;
    }
    console.log(`${chartFile}: the chart is current`);
    return 0;
  }
  console.log(region);
  return 0;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  }
}
