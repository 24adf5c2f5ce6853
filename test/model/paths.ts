/**
 * Paths generated from the model with `xstate/graph`, and the model's own coverage of them.
 *
 * Shortest paths (the default run): generated with each vertex keyed by the state, the context and
 * the event that led to it (and the state before), so every edge of the model's graph ends some
 * path and together the paths take every transition the world events can take. A greedy cover then
 * keeps the fewest paths that still visit every state node and take every transition of the model.
 *
 * Simple paths (the long run): every path through the chart's states that visits no state twice.
 * Over the full vertices (state and context) there are far too many to enumerate (the world's
 * bookkeeping makes every loop a new vertex), so the graph they are taken from is the chart's own:
 * one vertex per state value (the `health` region left out, see `valueKey`), one edge per world event that leads from one to another anywhere in
 * the model's graph. `getSimplePaths` enumerates that graph; each path is then realized on the model
 * (a shortest walk that takes its edges in order, adding only steps that stay in the same state, e.g.
 * sending the call whose 404 the next edge is). A state path the world cannot produce without
 * revisiting a state has no realization and is counted, not run.
 */
import { fromTransition } from 'xstate';
import { createTestModel, getSimplePaths, type AdjacencyMap, type StatePath } from 'xstate/graph';
import { isInit, modelCoverageOf, type Coverage } from './coverage.js';
import {
  candidateEvents,
  connectionModel,
  isApplicable,
  modelConfigs,
  serializeModelState,
  type ModelConfig,
  type ModelEvent,
  type ModelSnapshot,
} from './model.js';

export type ModelStatePath = StatePath<ModelSnapshot, ModelEvent>;
export type ConnectionTestModel = ReturnType<typeof testModelFor>;

export interface GeneratedPath {
  config: ModelConfig;
  model: ConnectionTestModel;
  path: ModelStatePath;
  /** Model states and transitions the path goes through. */
  coverage: Coverage;
}

export function testModelFor(config: ModelConfig, keyEdges: boolean) {
  return createTestModel(connectionModel, {
    input: config,
    events: (snapshot) => candidateEvents(snapshot),
    filterEvents: (snapshot, event) => isApplicable(snapshot, event),
    serializeState: (snapshot, event, previous) =>
      serializeModelState(snapshot) +
      (keyEdges && event !== undefined ? ` via ${JSON.stringify(event)} from ${JSON.stringify(previous?.value)}` : ''),
  });
}

/** The model's own coverage of a path. */
const coverageOf = (config: ModelConfig, path: ModelStatePath): Coverage => modelCoverageOf(connectionModel, config, path.steps);

export type PathKind = 'shortest' | 'simple';

export function generateShortestPaths(configs: readonly ModelConfig[] = modelConfigs): GeneratedPath[] {
  const generated: GeneratedPath[] = [];
  for (const config of configs) {
    const model = testModelFor(config, true);
    for (const path of model.getShortestPaths()) generated.push({ config, model, path, coverage: coverageOf(config, path) });
  }
  return generated;
}

/** The chart's own graph, as the model's world events move it: state value → (event → state value). */
type ValueGraph = Map<string, Map<string, string>>;

/**
 * A vertex of the chart's graph: the state value without the `health` region (W6). That region
 * only follows the answers (any 500 makes it degraded, the next answer steady again), so with it
 * every toggle would be a vertex of its own and the simple paths would multiply past what memory
 * holds (the long run ran out of heap); its transitions are taken by the shortest paths, which
 * take every transition of the model. Realizing a path may still toggle it between two edges.
 */
const valueKey = (snapshot: ModelSnapshot) => JSON.stringify(snapshot.value, (key, item: unknown) => (key === 'health' ? undefined : item));

type Vertex = AdjacencyMap<ModelSnapshot, ModelEvent>[keyof AdjacencyMap<ModelSnapshot, ModelEvent>];
/** The edges out of a vertex (the map's keys are branded strings, which `Object.values` cannot see through). */
const edgesOf = (vertex: Vertex | undefined) => Object.values(vertex?.transitions ?? {}) as { event: ModelEvent; state: ModelSnapshot }[];
const verticesOf = (adjacency: AdjacencyMap<ModelSnapshot, ModelEvent>) => Object.values(adjacency) as Vertex[];

function valueGraphOf(adjacency: AdjacencyMap<ModelSnapshot, ModelEvent>): ValueGraph {
  const graph: ValueGraph = new Map();
  for (const vertex of verticesOf(adjacency)) {
    const from = valueKey(vertex.state);
    let edges = graph.get(from);
    if (edges === undefined) graph.set(from, (edges = new Map<string, string>()));
    for (const { event, state } of edgesOf(vertex)) {
      const to = valueKey(state);
      if (to !== from) edges.set(JSON.stringify(event), to);
    }
  }
  return graph;
}

/** A walk on the model that takes `edges` in order, staying in each state meanwhile (shortest, BFS). */
function realize(
  adjacency: AdjacencyMap<ModelSnapshot, ModelEvent>,
  initial: ModelSnapshot,
  edges: readonly { label: string; to: string }[],
): ModelStatePath | undefined {
  interface Node {
    key: string;
    stage: number;
    state: ModelSnapshot;
    event: ModelEvent | undefined;
    parent: Node | undefined;
  }
  const start: Node = { key: serializeModelState(initial), stage: 0, state: initial, event: undefined, parent: undefined };
  const seen = new Set([`${start.key}#0`]);
  const queue: Node[] = [start];
  for (let head = 0; head < queue.length; head++) {
    const node = queue[head]!;
    if (node.stage === edges.length) {
      const steps: ModelStatePath['steps'] = [];
      for (let at: Node | undefined = node; at !== undefined; at = at.parent) {
        steps.unshift({ state: at.state, event: at.event ?? ({ type: 'xstate.init' } as unknown as ModelEvent) });
      }
      return { state: node.state, steps, weight: steps.length - 1 };
    }
    const here = valueKey(node.state);
    const next = edges[node.stage]!;
    for (const { event, state } of edgesOf((adjacency as Record<string, Vertex | undefined>)[node.key])) {
      const to = valueKey(state);
      const stage = JSON.stringify(event) === next.label && to === next.to ? node.stage + 1 : to === here ? node.stage : -1;
      if (stage < 0) continue;
      const key = serializeModelState(state);
      if (seen.has(`${key}#${stage}`)) continue;
      seen.add(`${key}#${stage}`);
      queue.push({ key, stage, state, event, parent: node });
    }
  }
  return undefined;
}

export interface SimplePaths {
  generated: GeneratedPath[];
  /** Maximal simple paths of the chart's graph, over all configurations. */
  statePaths: number;
  /** Those the world cannot produce without revisiting a state. */
  unrealizable: string[];
}

export function generateSimplePaths(configs: readonly ModelConfig[] = modelConfigs): SimplePaths {
  const result: SimplePaths = { generated: [], statePaths: 0, unrealizable: [] };
  for (const config of configs) {
    const model = testModelFor(config, false);
    const adjacency = model.getAdjacencyMap();
    const graph = valueGraphOf(adjacency);
    const initial = verticesOf(adjacency)[0]!.state;
    type Edge = { type: 'edge'; label: string; to: string };
    const chart = fromTransition((value: string, edge: Edge) => edge.to, valueKey(initial));
    const simple = getSimplePaths(chart, {
      serializeState: (snapshot) => snapshot.context,
      events: (snapshot) => [...(graph.get(snapshot.context) ?? [])].map(([label, to]): Edge => ({ type: 'edge', label, to })),
    });
    // Keep the maximal ones: a path that another one extends adds nothing.
    const sequences = simple.map((path) => path.steps.slice(1).map((step) => step.event));
    const keys = sequences.map((edges) => edges.map((edge) => edge.label).join('\n'));
    const prefixes = new Set<string>();
    for (const key of keys) {
      for (let cut = key.indexOf('\n'); cut >= 0; cut = key.indexOf('\n', cut + 1)) prefixes.add(key.slice(0, cut));
    }
    const done = new Set<string>();
    sequences.forEach((edges, index) => {
      const key = keys[index]!;
      if (edges.length === 0 || prefixes.has(key) || done.has(key)) return;
      done.add(key);
      result.statePaths++;
      const path = realize(adjacency, initial, edges);
      if (path === undefined) {
        result.unrealizable.push(
          `[${config.name}] ${edges.map((edge) => `${(JSON.parse(edge.label) as ModelEvent).type} → ${edge.to}`).join(', ')}`,
        );
        return;
      }
      result.generated.push({ config, model, path, coverage: coverageOf(config, path) });
    });
  }
  return result;
}

const featuresOf = (coverage: Coverage) => [
  ...[...coverage.states].map((id) => `state:${id}`),
  ...[...coverage.transitions].map((key) => `transition:${key}`),
];

/** The fewest paths (greedy) that together reach every state and transition the given paths reach. */
export function selectCovering<P extends { path: { steps: readonly unknown[] }; coverage: Coverage }>(paths: readonly P[]): P[] {
  const candidates = paths.map((path) => ({ path, features: new Set(featuresOf(path.coverage)) }));
  const covered = new Set<string>();
  const chosen: P[] = [];
  for (let round = 0; round < candidates.length; round++) {
    let best: (typeof candidates)[number] | undefined;
    let bestGain = 0;
    for (const candidate of candidates) {
      let gain = 0;
      for (const feature of candidate.features) if (!covered.has(feature)) gain++;
      const shorter = best !== undefined && candidate.path.path.steps.length < best.path.path.steps.length;
      if (gain > bestGain || (gain > 0 && gain === bestGain && shorter)) {
        best = candidate;
        bestGain = gain;
      }
    }
    if (best === undefined) break;
    for (const feature of best.features) covered.add(feature);
    chosen.push(best.path);
  }
  return chosen;
}

/** A short name for a path: its configuration and its events. */
export function describePath(generated: GeneratedPath): string {
  const events = generated.path.steps
    .filter(({ event }) => !isInit(event))
    .map(({ event }) => ('tag' in event ? `${event.type}(${event.tag})` : 'kind' in event ? `${event.type}(${event.kind})` : event.type));
  return `[${generated.config.name}] ${events.join(' → ') || '(initial state)'}`;
}
