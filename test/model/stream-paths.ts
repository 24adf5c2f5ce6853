/**
 * Paths generated from the stream models (stream-models.ts) with `xstate/graph`: every shortest
 * path of each configuration, each vertex keyed by the state, the context and the edge that led to
 * it (as paths.ts does for the connection chart), so that together they take every transition the
 * world events can take; and the model's own coverage of each path.
 */
import type { AnyStateMachine } from 'xstate';
import { createTestModel, type StatePath, type TestParam } from 'xstate/graph';
import { isInit, modelCoverageOf, type Coverage } from './coverage.js';
import {
  isStreamEventTaken,
  postModel,
  serializeStreamState,
  standaloneModel,
  streamCandidateEvents,
  streamConfigs,
  type StreamConfig,
  type StreamEvent,
  type StreamSnapshot,
} from './stream-models.js';

export interface StreamTestModel {
  getShortestPaths(): StatePath<StreamSnapshot, StreamEvent>[];
  testPath(path: StatePath<StreamSnapshot, StreamEvent>, params: TestParam<StreamSnapshot, StreamEvent>): Promise<unknown>;
}

export interface GeneratedStreamPath {
  config: StreamConfig;
  model: StreamTestModel;
  path: StatePath<StreamSnapshot, StreamEvent>;
  coverage: Coverage;
}

export const streamModelOf = (config: StreamConfig): AnyStateMachine => (config.machine === 'standalone' ? standaloneModel : postModel);

function testModelFor(config: StreamConfig): StreamTestModel {
  const options = {
    input: config,
    events: (snapshot: StreamSnapshot) => streamCandidateEvents(snapshot),
    // xstate/graph adds every event type the state handles; the world decides which can happen.
    filterEvents: (snapshot: StreamSnapshot, event: StreamEvent) => isStreamEventTaken(snapshot, event),
    serializeState: (snapshot: StreamSnapshot, event: StreamEvent | undefined, previous: StreamSnapshot | undefined) =>
      serializeStreamState(snapshot) + (event !== undefined ? ` via ${event.type} from ${JSON.stringify(previous?.value)}` : ''),
  };
  // The two models differ in context; the paths and their tests only read what both have.
  return config.machine === 'standalone' ? createTestModel(standaloneModel, options) : createTestModel(postModel, options);
}

const coverageOf = (config: StreamConfig, path: StatePath<StreamSnapshot, StreamEvent>): Coverage =>
  modelCoverageOf(streamModelOf(config), config, path.steps);

export function generateStreamPaths(configs: readonly StreamConfig[] = streamConfigs): GeneratedStreamPath[] {
  const generated: GeneratedStreamPath[] = [];
  for (const config of configs) {
    const model = testModelFor(config);
    for (const path of model.getShortestPaths()) generated.push({ config, model, path, coverage: coverageOf(config, path) });
  }
  return generated;
}

export function describeStreamPath(generated: GeneratedStreamPath): string {
  const events = generated.path.steps.filter(({ event }) => !isInit(event)).map(({ event }) => event.type);
  return `[${generated.config.name}] ${events.join(' → ') || '(initial state)'}`;
}
