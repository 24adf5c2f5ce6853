/**
 * The walk over a machine's definition, shared by the Mermaid diagrams of docs/chart.md
 * (scripts/diagram.ts) and the chart view (W5): the state nodes in document order, the
 * transitions that change state with their labels, and a plain JSON model of the whole chart the
 * view's page draws as nested boxes. The chart version (a hash of state ids and transitions) is
 * written into every recording, so a recording made against another chart says so.
 */
import type { AnyStateMachine, AnyStateNode, AnyTransitionDefinition } from 'xstate';
import { connectionMachine, postStreamMachine, standaloneStreamMachine } from '../../machines/index.js';

/** A guard's name: a named guard, a parameterized one, `not`/`and`/`or`/`stateIn`, or an inline one. */
export function guardName(guard: unknown): string {
  if (typeof guard === 'string') return guard;
  if (typeof guard === 'object' && guard !== null && 'type' in guard && typeof guard.type === 'string') return guard.type;
  if (typeof guard === 'function') {
    const fn = guard as { name: string; guards?: unknown[]; stateValue?: unknown };
    if (Array.isArray(fn.guards) && (fn.name === 'not' || fn.name === 'and' || fn.name === 'or')) {
      return `${fn.name}(${fn.guards.map(guardName).join(', ')})`;
    }
    if (fn.name === 'stateIn' && fn.stateValue !== undefined) return `stateIn(${JSON.stringify(fn.stateValue)})`;
    return fn.name === '' ? 'inline' : fn.name;
  }
  return 'inline';
}

/** Human name of an event descriptor: invoke and delay events by what they stand for. */
export function eventLabel(node: AnyStateNode, eventType: string): string {
  for (const invoke of node.invoke) {
    const name = typeof invoke.src === 'string' ? invoke.src : invoke.id;
    if (eventType === `xstate.done.actor.${invoke.id}`) return `done(${name})`;
    if (eventType === `xstate.error.actor.${invoke.id}`) return `error(${name})`;
    if (eventType === `xstate.snapshot.${invoke.id}`) return `snapshot(${name})`;
  }
  for (const delayed of node.after) {
    if (delayed.eventType === eventType) {
      const delay = delayed.delay;
      return `after ${typeof delay === 'number' ? `${delay}ms` : typeof delay === 'string' ? delay : 'inline delay'}`;
    }
  }
  if (eventType === `xstate.done.state.${node.id}`) return `done.state(${node.key})`;
  return eventType;
}

/** Every state node below `node`, depth first in document order. */
export function descendants(node: AnyStateNode): AnyStateNode[] {
  return Object.values(node.states).flatMap((child) => [child, ...descendants(child)]);
}

export interface LabelledTransition {
  transition: AnyTransitionDefinition;
  /** The event type as the machine sees it (`xstate.after.…`, `post.done`). */
  eventType: string;
  /** `event [guard]`, `event [else]` for the fallback after guarded ones, `always`, `after X`, `done(X)`. */
  label: string;
}

/** The transitions of one node that change state, labelled, in document order. */
export function transitionsOf(node: AnyStateNode): LabelledTransition[] {
  const out: LabelledTransition[] = [];
  const add = (list: readonly AnyTransitionDefinition[], eventType: string, event: string) => {
    list.forEach((transition, index) => {
      const guarded = list.slice(0, index).some((earlier) => earlier.guard !== undefined);
      const guard = transition.guard !== undefined ? ` [${guardName(transition.guard)}]` : guarded ? ' [else]' : '';
      out.push({ transition, eventType, label: `${event}${guard}` });
    });
  };
  for (const [eventType, list] of node.transitions) add(list, eventType, eventLabel(node, eventType));
  add(node.always ?? [], '', 'always');
  return out.filter(({ transition }) => transition.target !== undefined && transition.target.length > 0);
}

/** One state of a chart as the view draws it. Paths are dotted from the machine root (`open.session.active`). */
export interface ChartNode {
  path: string;
  key: string;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  tags: string[];
  /** What the state runs while active. */
  invokes: string[];
  /** Path of the initial child of a compound state. */
  initial?: string;
  transitions: { label: string; targets: string[] }[];
  children: ChartNode[];
}

export interface ChartMachine {
  /** The machine's id (`connection`, `postStream`, `standaloneStream`): recordings name actors' machines by it. */
  id: string;
  title: string;
  root: ChartNode;
}

/** The drawing model of one machine, from its definition (document order). */
export function chartNode(node: AnyStateNode): ChartNode {
  const children = Object.values(node.states).map(chartNode);
  const initial = node.type === 'compound' ? node.initial.target[0]?.path.join('.') : undefined;
  return {
    path: node.path.join('.'),
    key: node.key,
    type: node.type,
    tags: [...node.tags],
    invokes: node.invoke.map((invoke) => (typeof invoke.src === 'string' ? invoke.src : invoke.id)),
    ...(initial === undefined ? {} : { initial }),
    transitions: transitionsOf(node).map(({ transition, label }) => ({
      label,
      targets: (transition.target ?? []).map((target) => target.path.join('.')),
    })),
    children,
  };
}

/** The three charts of the transport, in docs/chart.md's order. */
export function transportCharts(): ChartMachine[] {
  return [
    { id: connectionMachine.id, title: 'Connection', root: chartNode(connectionMachine.root) },
    { id: postStreamMachine.id, title: 'POST stream', root: chartNode(postStreamMachine.root) },
    { id: standaloneStreamMachine.id, title: 'Standalone stream', root: chartNode(standaloneStreamMachine.root) },
  ];
}

/**
 * A short hash of what a recording depends on: every state id with its type, and every
 * transition as source, event type and targets. Sorted, so reordering a definition (a refactor
 * that moves states between files) keeps the version; renaming or rewiring a state changes it.
 */
export function chartVersion(machines: readonly AnyStateMachine[]): string {
  const lines: string[] = [];
  for (const machine of machines) {
    for (const node of [machine.root, ...descendants(machine.root)]) {
      lines.push(`${node.id} ${node.type}`);
      for (const { transition, eventType } of transitionsOf(node)) {
        const targets = (transition.target ?? []).map((target) => target.id).join(',');
        lines.push(`${node.id} ${eventType || 'always'} -> ${targets}`);
      }
    }
  }
  const text = lines.sort().join('\n');
  // Two FNV-1a 32-bit hashes with different seeds: 64 bits, plenty to tell charts apart.
  const fnv = (seed: number) => {
    let hash = seed;
    for (let i = 0; i < text.length; i++) {
      hash ^= text.charCodeAt(i);
      hash = Math.imul(hash, 0x01000193) >>> 0;
    }
    return hash.toString(16).padStart(8, '0');
  };
  return `${fnv(0x811c9dc5)}${fnv(0x050c5d1f)}`;
}

let current: string | undefined;

/** The version of the transport's own charts (computed once). */
export function transportChartVersion(): string {
  current ??= chartVersion([connectionMachine, postStreamMachine, standaloneStreamMachine]);
  return current;
}
