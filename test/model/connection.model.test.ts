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
 */
import { describe, expect, it } from 'vitest';
import { connectionMachine } from '../../src/index.js';
import { postStreamMachine } from '../../machines/post-stream.js';
import { standaloneStreamMachine } from '../../machines/standalone-stream.js';
import { Coverage, describeTransition, stateIdsOf, transitionsOf } from './coverage.js';
import { connectionModel, modelConfigs } from './model.js';
import { runPath } from './executor.js';
import { describePath, generateShortestPaths, generateSimplePaths, selectCovering, type PathKind } from './paths.js';

const kind: PathKind = process.env.MODEL_PATHS === 'simple' ? 'simple' : 'shortest';

/**
 * Transitions of the real chart that no world event can take, and why. Everything else must be
 * taken by some run: a transition added to the chart and not to the model fails the coverage test.
 */
/**
 * G2: a 404 to the standalone GET is session-missing only once that stream was open in this
 * session, so it needs a second GET; the world's transports wait an hour before any reconnect
 * (maxRetries 0: the ceiling at once), so no path makes one. test/integration/hardening.test.ts
 * (G2, F3 and P11, G2) and the restart tests in lifecycle.test.ts take these transitions.
 */
const needsSecondGet =
  'G2: only a GET after the standalone stream was open can meet a session-missing 404; the world never reconnects within a path';

const unreachable: Record<string, string> = {
  'connection.closed|close|0': 'the facade: close() on a closed transport resolves without telling the chart',
  'connection.connecting|send|0':
    "the facade POSTs the initialize itself (tag dataPlaneInitialize) unless streamIdleTimeout is set, which the model's " +
    'transports do not set; the chart hears its outcome (post.done, post.failed), which the paths take. A POST child for it: ' +
    'R9 in test/integration/data-plane.test.ts, and test/unit/connection.test.ts',
  'connection.open|standalone.sessionMissing|0': needsSecondGet,
  'connection.open|standalone.sessionMissing|1': needsSecondGet,
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

/** Transitions of the POST stream machine that no world event of the model can take, and why. */
const noIdleTimeout = "the model's transports set no streamIdleTimeout (R9: test/unit/post-stream.test.ts, connection.test.ts)";
const noScheduler = "the model's transports set no reconnectionScheduler (R4: test/unit/post-stream.test.ts)";
const noEventIds =
  "the model's server sends no event ids, so no stream is resumable: resumption (R1, R5, R6, R10) is proven in " +
  'test/unit/post-stream.test.ts and test/integration/resumption*.test.ts, data-plane hand-over to a resume in test/integration/data-plane.test.ts';
const offlineEndsCalls =
  'in the default sample of paths a call is answered or failed before the network comes back, so no POST child is alive at ' +
  '`online`; the full set (npm run test:model) takes it (W2 on a waiting POST stream: test/unit/waits.test.ts)';
const postStreamUnreachable: Record<string, string> = {
  'postStream.starting|always|1': `resumeStream()/resumptionToken is not a world event here (R11: test/unit/post-stream.test.ts)`,
  'postStream.starting|always|2': `resumeStream()/resumptionToken is not a world event here; ${noEventIds}`,
  'postStream.interrupted|stream.ended|2': noEventIds,
  'postStream.streaming|stream.ended|2': noEventIds,
  'postStream.interrupted|stream.ended|0': 'the data plane carries requests only; a notification is never handed over as a stream',
  'postStream.interrupted|stream.ended|1': noEventIds,
  'postStream.streaming|stream.ended|0': 'resumeStream() (which awaits nothing) is not a world event here',
  'postStream.streaming|stream.ended|1': noEventIds,
  'postStream.streaming.choosing|always|0': noIdleTimeout,
  'postStream.streaming.watching|xstate.after.streamIdleTimeout.postStream.streaming.watching|0': noIdleTimeout,
  'postStream.backoff.choosing|always|0': noEventIds,
  'postStream.backoff.choosing|always|1': noScheduler,
  'postStream.backoff.choosing|always|2': noEventIds,
  'postStream.backoff.timed|xstate.after.reconnectDelay.postStream.backoff.timed|0': noEventIds,
  'postStream.backoff.timed|network.offline|0': noEventIds,
  'postStream.backoff.scheduled|reconnect.due|0': noScheduler,
  'postStream.backoff.scheduled|network.offline|0': noScheduler,
  'postStream.backoff.paused|network.online|0': noEventIds,
  ...(process.env.MODEL_PATHS === 'simple' ? {} : { 'postStream|network.online|0': offlineEndsCalls }),
  'postStream.resuming|xstate.done.actor.0.postStream.resuming|0': noEventIds,
  'postStream.resuming|xstate.done.actor.0.postStream.resuming|1': noEventIds,
  'postStream.resuming|xstate.error.actor.0.postStream.resuming|0': noEventIds,
  'postStream.resuming|xstate.error.actor.0.postStream.resuming|1': noEventIds,
};

/** Transitions of the standalone stream machine that no world event of the model can take, and why. */
const budgetZero =
  "the model's transports have maxRetries 0 and hour-long delays: a failed standalone GET waits at the ceiling at once (G5) and " +
  'never comes back within a path (backoff: test/unit/connection.test.ts G4, test/integration/standalone.test.ts)';
const degradedOnline =
  "the model's network configuration answers its standalone GET, and the paths that fail the GET keep the network online " +
  '(W2 on a waiting standalone stream: test/unit/waits.test.ts, test/browser/react-status.test.ts)';
const standaloneUnreachable: Record<string, string> = {
  'standaloneStream.opening|xstate.error.actor.0.standaloneStream.opening|1':
    "a 404 to a GET of a session whose stream was open before (G2 makes the first GET's 404 a refusal) needs a second GET, which the model's hour-long reconnect delays never bring",
  'standaloneStream.listening.choosing|always|0': noIdleTimeout,
  'standaloneStream.listening.watching|xstate.after.streamIdleTimeout.standaloneStream.listening.watching|0': noIdleTimeout,
  'standaloneStream.retrying|always|0': budgetZero,
  'standaloneStream.backoff.choosing|always|0': budgetZero,
  'standaloneStream.backoff.choosing|always|1': noScheduler,
  'standaloneStream.backoff.choosing|always|2': budgetZero,
  'standaloneStream.backoff.timed|xstate.after.reconnectDelay.standaloneStream.backoff.timed|0': budgetZero,
  'standaloneStream.backoff.timed|network.offline|0': budgetZero,
  'standaloneStream.backoff.scheduled|reconnect.due|0': noScheduler,
  'standaloneStream.backoff.scheduled|network.offline|0': noScheduler,
  'standaloneStream.backoff.paused|network.online|0': budgetZero,
  'standaloneStream.degraded.choosing|always|0': degradedOnline,
  'standaloneStream.degraded.choosing|always|1': noScheduler,
  'standaloneStream.degraded.timed|xstate.after.ceilingDelay.standaloneStream.degraded.timed|0': budgetZero,
  'standaloneStream.degraded.timed|network.offline|0': degradedOnline,
  'standaloneStream.degraded.scheduled|reconnect.due|0': noScheduler,
  'standaloneStream.degraded.scheduled|network.offline|0': noScheduler,
  'standaloneStream.degraded.paused|network.online|0': degradedOnline,
};

/** The model mirrors that transition but, like the real one, it is never offered to the world. */
const modelUnreachable = new Set([
  'connection.closed|close|0',
  // needsSecondGet: the model's mirror of the two transitions above.
  'connection.open.standalone.active|get.404|3',
  'connection.open.standalone.active|get.404|4',
]);

const realStates = stateIdsOf(connectionMachine);
const modelStates = stateIdsOf(connectionModel);
const realTransitions = transitionsOf(connectionMachine);

const started = performance.now();
const shortest = generateShortestPaths();
const covering = selectCovering(shortest);
const simple = kind === 'simple' ? generateSimplePaths() : undefined;
const generated = [...shortest, ...(simple?.generated ?? [])];
// The default run: the covering subset of the shortest paths; the long run: every path generated.
const toRun = simple === undefined ? covering : [...shortest, ...simple.generated];
const generationMs = performance.now() - started;

const modelCoverage = new Coverage('connection');
for (const path of generated) modelCoverage.merge(path.coverage);
const modelTransitions = transitionsOf(connectionModel);

const realCoverage = new Coverage('connection');
let ran = 0;
let steps = 0;

describe('connection chart, model-based', () => {
  it('the model has exactly the states of the real chart (so it cannot drift silently)', () => {
    expect([...modelStates].sort()).toEqual([...realStates].sort());
  });

  it('the paths generated from the model visit every state and take every transition of the model', () => {
    const missedStates = modelStates.filter((id) => !modelCoverage.states.has(id));
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
        await runPath(path.model, path.path, path.config, realCoverage);
        ran++;
        steps += path.path.steps.length - 1;
      });
    }
  });

  it('the runs visited every state of the real chart and took every transition the world can cause', () => {
    const missedStates = realStates.filter((id) => !realCoverage.states.has(id));
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
    expect(ran, 'every path ran to its end (this test reads what they covered)').toBe(toRun.length);
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
