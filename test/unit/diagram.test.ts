import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createMachine, fromPromise, setup, type AnyStateMachine, type AnyStateNode } from 'xstate';
import { connectionMachine } from '../../machines/connection/index.js';
import { postStreamMachine } from '../../machines/post-stream.js';
import { standaloneStreamMachine } from '../../machines/standalone-stream.js';
import { chartPath, chartRegion, machineToMermaid, readRegion } from '../../scripts/diagram.js';

/** Every state of a machine as its path, walked here independently of the generator. */
function paths(machine: AnyStateMachine): string[] {
  const out: string[] = [];
  const walk = (node: AnyStateNode) => {
    for (const child of Object.values(node.states)) {
      out.push(child.path.join('.'));
      walk(child);
    }
  };
  walk(machine.root);
  return out;
}

/**
 * The states a Mermaid diagram declares, as paths built from the labels of the blocks that
 * enclose them: `state "active" as x` inside `state "session" as y {` inside `state "open" as z {`
 * gives `open.session.active`.
 */
function declaredPaths(diagram: string): string[] {
  const stack: string[] = [];
  const out: string[] = [];
  for (const raw of diagram.split('\n')) {
    const line = raw.trim();
    // A title may add what the state is or runs: `back (history)`, `streaming (invoke readStream)`.
    const declaration = /^state "([^"]*?)(?: \((?:history|invoke [^)]*)\))?" as \w+( \{)?$/.exec(line);
    if (declaration) {
      out.push([...stack, declaration[1]!].join('.'));
      if (declaration[2]) stack.push(declaration[1]!);
    } else if (line === '}') {
      stack.pop();
    }
  }
  return out;
}

/** Transitions that change state, as `source -> target` pairs, counted from the machine. */
function targetedTransitions(machine: AnyStateMachine): number {
  const nodes: AnyStateNode[] = [];
  const walk = (node: AnyStateNode) => {
    nodes.push(node);
    Object.values(node.states).forEach(walk);
  };
  walk(machine.root);
  let count = 0;
  for (const node of nodes) {
    const all = [...[...node.transitions.values()].flat(), ...(node.always ?? [])];
    for (const transition of all) count += transition.target?.length ?? 0;
  }
  return count;
}

/** Arrows in a diagram other than the initial and final markers. */
function arrows(diagram: string): string[] {
  return diagram
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.includes(' --> ') && !line.startsWith('[*]') && !line.endsWith('--> [*]'));
}

describe('the lifecycle chart (docs/chart.md)', () => {
  it('U3: the chart in docs/chart.md is generated from the machine and is current', () => {
    const page = readFileSync(chartPath, 'utf8');
    const region = readRegion(page);
    expect(region, 'docs/chart.md has no <!-- chart:start --> … <!-- chart:end --> region').toBeDefined();
    // On failure: run `npm run diagram` and commit docs/chart.md.
    expect(region).toBe(chartRegion());
  });

  it('is the same text every time it is generated', () => {
    expect(chartRegion()).toBe(chartRegion());
    expect(machineToMermaid(connectionMachine)).toBe(machineToMermaid(connectionMachine));
  });

  it('names every state of the connection chart, at its place in the hierarchy', () => {
    const diagram = machineToMermaid(connectionMachine);
    const declared = declaredPaths(diagram);
    const expected = paths(connectionMachine);
    expect(expected.length).toBeGreaterThan(5);
    for (const path of expected) expect(declared, `state ${path} is missing`).toContain(path);
    expect(declared.filter((path) => path !== '(any state)')).toEqual(expected);
  });

  it('names every state of the POST-stream and standalone-stream charts and marks their final states', () => {
    const machines: AnyStateMachine[] = [postStreamMachine, standaloneStreamMachine];
    for (const machine of machines) {
      const diagram = machineToMermaid(machine);
      // Root transitions (the standalone chart's windDown) are drawn from an '(any state)' box.
      expect(declaredPaths(diagram).filter((path) => path !== '(any state)')).toEqual(paths(machine));
      for (const node of Object.values<AnyStateNode>(machine.root.states)) {
        if (node.type === 'final') expect(diagram).toContain(`${node.key} --> [*]`);
      }
    }
  });

  it('draws one arrow for every transition that has a target', () => {
    for (const machine of [connectionMachine, postStreamMachine, standaloneStreamMachine]) {
      expect(arrows(machineToMermaid(machine))).toHaveLength(targetedTransitions(machine));
    }
  });

  it('walks any machine: nested parallel regions, history, delays, invokes, guards, root transitions', () => {
    const machine = setup({
      actors: { load: fromPromise(() => Promise.resolve(1)) },
      guards: { ready: () => true },
      delays: { patience: 100 },
    }).createMachine({
      id: 'sample',
      initial: 'a',
      on: { reset: '.a' },
      states: {
        a: { on: { go: [{ guard: 'ready', target: 'b' }, { target: '#sample.c.left.deep' }] } },
        b: {
          invoke: { src: 'load', onDone: 'c', onError: 'done' },
          after: { patience: 'a', 250: 'done' },
        },
        c: {
          type: 'parallel',
          invoke: { src: 'load' },
          states: {
            left: {
              initial: 'shallow',
              states: {
                shallow: { always: 'deep' },
                deep: {},
                back: { type: 'history' },
              },
            },
            right: {
              type: 'parallel',
              states: {
                up: { initial: 'one', states: { one: { on: { next: 'two' } }, two: { type: 'final' } } },
                down: { initial: 'one', states: { one: {} } },
              },
            },
          },
          onDone: 'done',
        },
        done: { type: 'final' },
      },
    });
    const diagram = machineToMermaid(machine);
    expect(declaredPaths(diagram).filter((path) => path !== '(any state)')).toEqual(paths(machine));
    const drawn = [
      'state "(any state)" as sample_any',
      'sample_any --> a : reset',
      'a --> b : go [ready]',
      'a --> c_left_deep : go [else]',
      'b --> c : done(load)',
      'b --> done : error(load)',
      'b --> a : after patience',
      'b --> done : after 250ms',
      'c_left_shallow --> c_left_deep : always',
      'c --> done : done.state(c)',
      'state "c (invoke load)" as c {',
      'state "back (history)" as c_left_back',
      'c_right_up_two --> [*]',
      'done --> [*]',
    ];
    for (const line of drawn) expect(diagram).toContain(line);
    // Regions of a parallel state are separated by `--`; both parallel states have two regions.
    expect(diagram.split('\n').filter((line) => line.trim() === '--')).toHaveLength(2);
    expect(arrows(diagram)).toHaveLength(targetedTransitions(machine));
  });

  it('keeps identifiers Mermaid can parse even when state names collide or are keywords', () => {
    const machine = createMachine({
      id: 'odd',
      initial: 'default',
      states: {
        default: { on: { 'a:b': 'x-y' } },
        'x-y': { initial: 'z', states: { z: {} } },
        x_y_z: {},
        root: {},
      },
    });
    const diagram = machineToMermaid(machine);
    const drawn = [
      'state "default" as s_default',
      'state "x-y" as x_y {',
      'state "z" as x_y_z',
      'state "x_y_z" as x_y_z_2',
      'state "root" as s_root',
      's_default --> x_y : a b',
    ];
    for (const line of drawn) expect(diagram).toContain(line);
  });
});
