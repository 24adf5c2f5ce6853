/**
 * Model-based tests of the connection chart (DESIGN.md, "How it is tested"): paths generated from
 * an abstract model of the chart (test/model/model.ts) with `xstate/graph`, each run against the
 * real transport and a server whose answers the path chooses, with the transport's state checked
 * after every step; then the real chart's states and transitions those runs went through are
 * counted against all of the chart's.
 *
 * `npm test` runs the smallest subset of the shortest paths that still covers every state and
 * transition of the model; `npm run test:model` (MODEL_PATHS=simple) runs every path generated: all
 * the shortest paths and every simple path through the chart's states (see paths.ts).
 *
 * The 2026-07-28 branch (`connection.modern*`, E1-E10) has a model of its own (modern-model.ts,
 * run by modern-executor.ts): the main model has exactly the chart's other states, the modern model
 * exactly the `connection.modern*` ones (plus the few other states it enters and leaves by), and
 * the coverage of the real chart counts the runs of both.
 */
import { describe, expect, it } from 'vitest';
import { connectionMachine } from '../../machines/index.js';
import { postStreamMachine } from '../../machines/post-stream.js';
import { standaloneStreamMachine } from '../../machines/standalone-stream.js';
import { Coverage, describeTransition, stateIdsOf, transitionsOf } from './coverage.js';
import { connectionModel, modelConfigs } from './model.js';
import { World } from './executor.js';
import { runInWorld } from './driver.js';
import { describePath, generateShortestPaths, generateSimplePaths, selectCovering, type PathKind } from './paths.js';
import { describeModernPath, generateModernPaths, modernConfigs, modernModel } from './modern-model.js';
import { ModernWorld } from './modern-executor.js';
import { modernGuards } from '../../machines/connection/modern.js';
import { StreamWorld } from './stream-executor.js';
import { postModel, standaloneModel, streamConfigs } from './stream-models.js';
import { describeStreamPath, generateStreamPaths, streamModelOf } from './stream-paths.js';

const kind: PathKind = process.env.MODEL_PATHS === 'simple' ? 'simple' : 'shortest';

/**
 * Transitions of the real chart that no world event can take, and why. Everything else must be
 * taken by some run: a transition added to the chart and not to the model fails the coverage test.
 */
/**
 * G2: a 404 to the standalone GET is session-missing only once that stream was open in this
 * session, so it needs a second GET; the stream models' runs make one (the caller's scheduler ends
 * the wait) and take the recovery it starts. Right after a session was re-established it is only
 * reported: that needs a recovery and then a second GET in the new session, which neither model's
 * world makes (the connection model's transports never reconnect the GET, the stream models open
 * one session). test/integration/hardening.test.ts (G2, F3 and P11, G2) takes it.
 */
const needsSecondGetAfterRecovery =
  'G2 after F3: a session-missing 404 to a second standalone GET of a session just re-established; no world of the models makes that GET';

/** F3: the models' transports never retry (maxRetries 0, every wait an hour), so a failed re-initialize waits at once. */
const noQuickRetries =
  "F3: the models' transports have maxRetries 0 and hour-long waits (no stream ever reconnects in them), so a failed re-initialize " +
  'goes to `waiting` at once and no planned wait ends; test/unit/connection.test.ts and test/integration/heal.test.ts (F3, F4) take these';

/** States of the real chart no world of the models reaches, and why (their transitions are in `unreachable` too). */
const unreachableStates: Record<string, string> = { 'connection.reconnecting.backoff': noQuickRetries };

const unreachable: Record<string, string> = {
  'connection.reconnecting.reinitializing|post.failed|0': noQuickRetries,
  'connection.reconnecting.confirming|post.failed|0': noQuickRetries,
  ...Object.fromEntries(
    [...transitionsOf(connectionMachine).keys()]
      .filter((key) => key.startsWith('connection.reconnecting.backoff|') || key.startsWith('connection.waiting|xstate.after.'))
      .map((key) => [key, noQuickRetries]),
  ),
  'connection.retrying|always|3':
    'F4: `waiting` follows a recovery that canRecover allowed, or a 2026-07-28 call; nothing changes either before the attempt',
  ...Object.fromEntries(
    // (post.done|1 and post.failed|1, another request's answer while the probe is out, are taken: the Client's own
    // probe, sent before the outage and still held, answered or refused while the chart's probe is out.)
    ['send|0', 'send|1'].map((key) => [
      `connection.probing|${key}`,
      'F4: the modern model has one call at a time, and it is the one held for the probe: nothing else is sent while it is out',
    ]),
  ),
  'connection.closed|close|0': 'the facade: close() on a closed transport resolves without telling the chart',
  'connection.open|standalone.sessionMissing|0': needsSecondGetAfterRecovery,
  // W6: the health region is shared by `open` and `modern`; the 2026-07-28 era has no standalone stream.
  'connection.modern.health.steady|standalone.waiting|0': 'W6: no standalone stream in the 2026-07-28 era (the region is shared with open)',
  'connection.modern.health.degraded|standalone.waiting|0':
    'W6: no standalone stream in the 2026-07-28 era (the region is shared with open)',
  'connection.modern.health.degraded|standalone.listening|0':
    'W6: no standalone stream in the 2026-07-28 era (the region is shared with open)',
  ...Object.fromEntries(
    ['closing', 'draining'].flatMap((state) =>
      ['standalone.sessionMissing', 'standalone.unauthorized', 'standalone.degraded'].map((event) => [
        `connection.open.session.${state}|${event}|0`,
        'a race only: close() winds the standalone stream down at once (a reconnect wait ends; a GET still opening is let ' +
          'finish, and a refusal then just ends it; a stream being read drains and then ends without retrying), so a report ' +
          'can only be one already on its way',
      ]),
    ),
  ),
  ...Object.fromEntries(
    ['close', 'send', 'session.terminate'].map((event) => [
      `connection.open.session.draining|${event}|0`,
      'only inside the drain window (drainTimeout, a 100 ms chart constant) after the DELETE was answered: ' +
        'no step of a path can be placed there without a timing assumption',
    ]),
  ),
};

/**
 * Transitions of the stream machines that no world event can take, and why. The connection model's
 * runs and the stream models' runs (stream-models.ts: resumption, the caller's scheduler, timers,
 * the idle watch, the network signal, budgets) together take every other one.
 */
const postStreamUnreachable: Record<string, string> = {
  'postStream.interrupted|stream.ended|0':
    'the data plane carries calls only (a notification or resumeStream() always goes through the chart), so nothing awaiting no response is ever handed over',
  'postStream.interrupted|stream.ended|1':
    'E13: a subscriptions/listen never takes the direct path (isDirectCall), so no listen stream is ever handed over to a POST child',
  'postStream.interrupted|stream.ended|3':
    "R12: a stream taken over from the direct path is the POST's own, never a resume's, so its end is never an empty resume",
  'postStream.resuming|xstate.error.actor.0.postStream.resuming|0':
    'R12: a resume GET failing after empty resumes once 14 s have passed since the first end; the models have no clock (test/unit/post-stream.test.ts drives it)',
};
const standaloneUnreachable: Record<string, string> = {};

/** The model mirrors that transition but, like the real one, it is never offered to the world. */
const modelUnreachable = new Set([
  'connection.closed|close|0',
  // The model's mirror of the G2 transitions (its transports never reconnect the GET; the stream models take them).
  'connection.open.standalone.active|get.404|3',
  'connection.open.standalone.active|get.404|4',
]);

/** The 2026-07-28 branch's states: the modern model's, not the main model's. */
const isModernState = (id: string) => id === 'connection.modern' || id.startsWith('connection.modern.') || id === 'connection.probing';

const realStates = stateIdsOf(connectionMachine);
const modelStates = stateIdsOf(connectionModel);
const modernStates = stateIdsOf(modernModel);
const realTransitions = transitionsOf(connectionMachine);

const started = performance.now();
const shortest = generateShortestPaths();
const covering = selectCovering(shortest);
const simple = kind === 'simple' ? generateSimplePaths() : undefined;
const generated = [...shortest, ...(simple?.generated ?? [])];
// The default run: the covering subset of the shortest paths; the long run: every path generated.
const toRun = simple === undefined ? covering : [...shortest, ...simple.generated];
// The stream machines' own models (stream-models.ts): every shortest path in the long run, a covering subset by
// default (each real guard has a model transition of its own, R12's emptyResumesSpent included, so the subset takes it).
const streamGenerated = generateStreamPaths();
const streamCovering = selectCovering(streamGenerated);
const streamToRun = kind === 'simple' ? streamGenerated : streamCovering;
// The modern branch's model (modern-model.ts): every shortest path in the long run, a covering subset by default.
const modernGenerated = generateModernPaths();
const modernCovering = selectCovering(modernGenerated);
const modernToRun = kind === 'simple' ? modernGenerated : modernCovering;
const generationMs = performance.now() - started;

const modelCoverage = new Coverage('connection');
for (const path of generated) modelCoverage.merge(path.coverage);
const modelTransitions = transitionsOf(connectionModel);

const realCoverage = new Coverage('connection');
let ran = 0;
let steps = 0;
let streamRan = 0;
let modernRan = 0;
let modernSteps = 0;

/** The stream models' states are the real machines' (the POST model adds `idle`: no POST stream actor). */
const streamModels = [
  { model: standaloneModel, machine: standaloneStreamMachine, modelOnly: [] as string[] },
  { model: postModel, machine: postStreamMachine, modelOnly: ['postStream.idle'] },
];
/** Stream model transitions no world event can take, and why (the real machine's twin is exempt below too). */
const streamModelUnreachable = new Set(['postStream.interrupted|always|0']);

describe('connection chart, model-based', () => {
  it('the models have exactly the states of the real chart (so they cannot drift silently)', () => {
    // The main model: every state of the chart but the 2026-07-28 branch's.
    expect([...modelStates].sort()).toEqual(realStates.filter((id) => !isModernState(id)).sort());
    // The modern model: exactly the branch's states, and otherwise only states of the chart it enters and leaves by.
    expect(modernStates.filter(isModernState).sort()).toEqual(realStates.filter(isModernState).sort());
    expect(modernStates.filter((id) => !realStates.includes(id))).toEqual([]);
    expect([...new Set([...modelStates, ...modernStates])].sort()).toEqual([...realStates].sort());
  });

  it('the paths generated from the model visit every state and take every transition of the model', () => {
    const missedStates = modelStates.filter((id) => !modelCoverage.states.has(id) && !(id in unreachableStates));
    const missedTransitions = [...modelTransitions.keys()].filter(
      (key) => !modelCoverage.transitions.has(key) && !modelUnreachable.has(key),
    );
    console.log(
      `model: ${modelConfigs.length} configurations (${modelConfigs.map((c) => c.name).join(', ')}); ` +
        `${shortest.length} shortest paths (${covering.length} of them cover the model)` +
        (simple === undefined
          ? ''
          : `; ${simple.statePaths} maximal simple paths through the chart's states, ${simple.generated.length} realizable by world events ` +
            `(${simple.unrealizable.length} would need to revisit a state to build the context they need)`) +
        `; generated in ${generationMs.toFixed(0)} ms; ${toRun.length} paths to run (${toRun.reduce((n, p) => n + p.path.steps.length - 1, 0)} steps); ` +
        `${modelStates.length - missedStates.length}/${modelStates.length} states, ` +
        `${modelTransitions.size - missedTransitions.length}/${modelTransitions.size} transitions of the model`,
    );
    expect(missedStates).toEqual([]);
    expect(missedTransitions.map((key) => describeTransition(modelTransitions.get(key)!))).toEqual([]);
  });

  describe(`${toRun.length} paths, run against the real transport and a scripted server`, () => {
    for (const path of toRun) {
      it(describePath(path), async () => {
        await runInWorld(path.model, path.path, () => World.open(path.config), realCoverage);
        ran++;
        steps += path.path.steps.length - 1;
      });
    }
  });

  it.each(streamModels)('the $machine.id model has exactly the states of the real machine', ({ model, machine, modelOnly }) => {
    expect(
      stateIdsOf(model)
        .filter((id) => !modelOnly.includes(id))
        .sort(),
    ).toEqual(stateIdsOf(machine).sort());
  });

  it.each(streamModels)('the stream paths take every transition of the $machine.id model', ({ model }) => {
    const covered = new Coverage(model.id);
    for (const path of streamGenerated) if (path.coverage.machineId === model.id) covered.merge(path.coverage);
    const all = transitionsOf(model);
    const missed = [...all.keys()].filter((key) => !covered.transitions.has(key) && !streamModelUnreachable.has(key));
    console.log(
      `${model.id} model: ${streamConfigs.filter((config) => streamModelOf(config) === model).length} configurations; ` +
        `${streamGenerated.filter((p) => p.coverage.machineId === model.id).length} shortest paths ` +
        `(${streamCovering.filter((p) => p.coverage.machineId === model.id).length} of them cover the model); ` +
        `transitions ${all.size - missed.length}/${all.size}`,
    );
    expect(missed.map((key) => describeTransition(all.get(key)!))).toEqual([]);
  });

  describe(`${streamToRun.length} paths of the stream machines, run against the real transport (node:http) and a scripted server`, () => {
    for (const path of streamToRun) {
      it(describeStreamPath(path), async () => {
        await runInWorld(path.model, path.path, () => StreamWorld.open(path.config), realCoverage);
        streamRan++;
      });
    }
  });

  it('the modern paths visit every state and take every transition of the modern model', () => {
    const covered = new Coverage('connection');
    for (const path of modernGenerated) covered.merge(path.coverage);
    const all = transitionsOf(modernModel);
    const missedStates = modernStates.filter((id) => !covered.states.has(id));
    const missed = [...all.keys()].filter((key) => !covered.transitions.has(key));
    console.log(
      `modern model: ${modernConfigs.length} configurations (${modernConfigs.map((c) => c.name).join(', ')}); ` +
        `${modernGenerated.length} shortest paths (${modernCovering.length} of them cover the model); ` +
        `${modernToRun.length} paths to run (${modernToRun.reduce((n, p) => n + p.path.steps.length - 1, 0)} steps); ` +
        `${modernStates.length - missedStates.length}/${modernStates.length} states, transitions ${all.size - missed.length}/${all.size}`,
    );
    expect(missedStates).toEqual([]);
    expect(missed.map((key) => describeTransition(all.get(key)!))).toEqual([]);
  });

  describe(`${modernToRun.length} paths of the 2026-07-28 branch, run against the real transport and a scripted server`, () => {
    for (const path of modernToRun) {
      it(describeModernPath(path), async () => {
        await runInWorld(path.model, path.path, () => ModernWorld.open(path.config), realCoverage);
        modernRan++;
        modernSteps += path.path.steps.length - 1;
      });
    }
  });

  it('the runs visited every state of the real chart and took every transition the world can cause', () => {
    const missedStates = realStates.filter((id) => !realCoverage.states.has(id) && !(id in unreachableStates));
    const missedTransitions = [...realTransitions.keys()].filter((key) => !realCoverage.transitions.has(key) && !(key in unreachable));
    const unexpectedlyTaken = Object.keys(unreachable).filter((key) => realCoverage.transitions.has(key));
    const taken = [...realTransitions.keys()].filter((key) => realCoverage.transitions.has(key)).length;
    console.log(
      `real chart: ${ran} paths, ${steps} steps; states ${realStates.length - missedStates.length}/${realStates.length}; ` +
        `transitions ${taken}/${realTransitions.size} (${Object.keys(unreachable).length} no world event can take: ` +
        `${Object.entries(unreachable)
          .map(([key, why]) => `${key}: ${why}`)
          .join('; ')})`,
    );
    console.log(`real states covered: ${[...realCoverage.states].sort().join(', ')}`);
    console.log(
      `real transitions taken:\n  ${[...realCoverage.transitions]
        .sort()
        .map((key) => describeTransition(realTransitions.get(key)!))
        .join('\n  ')}`,
    );
    // In the branch, into it, or guarded by one of its guards (the era probe's answers while connecting).
    const modernGuard = new RegExp(`\\[(${Object.keys(modernGuards).join('|')})\\]`);
    const modernTransitions = [...realTransitions.keys()].filter((key) => {
      const described = describeTransition(realTransitions.get(key)!);
      return isModernState(key.split('|')[0]!) || described.endsWith('--> connection.modern') || modernGuard.test(described);
    });
    console.log(
      `real chart, 2026-07-28 branch: ${modernRan} paths, ${modernSteps} steps; transitions in or into it ` +
        `${modernTransitions.filter((key) => realCoverage.transitions.has(key)).length}/${modernTransitions.length} ` +
        `(${modernTransitions.filter((key) => !realCoverage.transitions.has(key)).join(', ') || 'none missed'}); `,
    );
    expect(ran, 'every path ran to its end (this test reads what they covered)').toBe(toRun.length);
    expect(streamRan, 'every stream path ran to its end').toBe(streamToRun.length);
    expect(modernRan, 'every modern path ran to its end').toBe(modernToRun.length);
    expect(missedStates).toEqual([]);
    expect(missedTransitions.map((key) => describeTransition(realTransitions.get(key)!))).toEqual([]);
    expect(unexpectedlyTaken).toEqual([]);
    for (const key of Object.keys(unreachable)) expect(realTransitions.has(key), `${key} is still in the chart`).toBe(true);
  });

  it.each([
    { machine: postStreamMachine, unreachable: postStreamUnreachable },
    { machine: standaloneStreamMachine, unreachable: standaloneUnreachable },
  ])('the runs took every transition of the $machine.id machine the world can cause', ({ machine, unreachable: cannot }) => {
    const all = transitionsOf(machine);
    const covered = realCoverage.children.get(machine.id) ?? new Coverage(machine.id);
    const taken = [...all.keys()].filter((key) => covered.transitions.has(key));
    const missed = [...all.keys()].filter((key) => !covered.transitions.has(key) && !(key in cannot));
    const unexpectedlyTaken = Object.keys(cannot).filter((key) => covered.transitions.has(key));
    console.log(
      `${machine.id}: transitions ${taken.length}/${all.size} (${Object.keys(cannot).length} no world event of the model can take)\n  ` +
        taken
          .sort()
          .map((key) => describeTransition(all.get(key)!))
          .join('\n  '),
    );
    expect(missed.map((key) => describeTransition(all.get(key)!))).toEqual([]);
    expect(unexpectedlyTaken).toEqual([]);
    for (const key of Object.keys(cannot)) expect(all.has(key), `${key} is still in the chart`).toBe(true);
  });
});
