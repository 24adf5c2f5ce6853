/**
 * What a chart has (every state node, every transition) and what a run of it touched, named the
 * same way for the real connection chart and for the abstract model, so the two can be compared.
 *
 * A transition is named `source|event|index`: the state node that owns it, the event type it is
 * for (`always` for an eventless one), and its place among that node's transitions for that event
 * (guarded alternatives are separate transitions). Names do not depend on object identity, so a
 * chart copied by `machine.provide()` names its transitions exactly as the original does.
 */
import {
  createActor,
  type AnyStateMachine,
  type AnyStateNode,
  type AnyTransitionDefinition,
  type InspectionEvent,
  type StateValue,
} from 'xstate';

export function stateNodesOf(machine: AnyStateMachine): AnyStateNode[] {
  const nodes: AnyStateNode[] = [];
  const walk = (node: AnyStateNode) => {
    nodes.push(node);
    for (const child of Object.values(node.states)) walk(child);
  };
  walk(machine.root);
  return nodes;
}

/** Every state id of a machine, the root included. */
export function stateIdsOf(machine: AnyStateMachine): string[] {
  return stateNodesOf(machine).map((node) => node.id);
}

/** The parts of a state node read here (xstate types them loosely). */
interface NodeTransitions {
  id: string;
  always?: readonly AnyTransitionDefinition[] | undefined;
  transitions: ReadonlyMap<string, readonly AnyTransitionDefinition[]>;
}

export function transitionKey(transition: AnyTransitionDefinition): string {
  const source = transition.source as NodeTransitions;
  const event: string = (transition as { eventType: string }).eventType;
  const list = event === '' ? (source.always ?? []) : (source.transitions.get(event) ?? []);
  return `${source.id}|${event === '' ? 'always' : event}|${list.indexOf(transition)}`;
}

/** Every transition of a machine (invoke onDone/onError and `after` included), by name. */
export function transitionsOf(machine: AnyStateMachine): Map<string, AnyTransitionDefinition> {
  const all = new Map<string, AnyTransitionDefinition>();
  for (const node of stateNodesOf(machine) as NodeTransitions[]) {
    for (const list of node.transitions.values()) for (const transition of list) all.set(transitionKey(transition), transition);
    for (const transition of node.always ?? []) all.set(transitionKey(transition), transition);
  }
  return all;
}

/** A readable form of a transition: `source --event [guard]--> targets`. */
export function describeTransition(transition: AnyTransitionDefinition): string {
  const guard = transition.guard;
  const guardName =
    typeof guard === 'string' ? guard : typeof guard === 'object' && 'type' in guard ? guard.type : guard === undefined ? '' : 'inline';
  const targets = transition.target?.map((target) => target.id).join(', ') ?? '(stays)';
  return `${transition.source.id} --${transition.eventType || 'always'}${guardName ? ` [${guardName}]` : ''}--> ${targets}`;
}

/** State ids a state value is in: `{ open: { session: 'active' } }` → connection.open, connection.open.session, … */
export function stateIdsOfValue(machineId: string, value: StateValue): string[] {
  const ids = [machineId];
  const walk = (prefix: string, node: StateValue) => {
    if (typeof node === 'string') {
      ids.push(`${prefix}.${node}`);
      return;
    }
    for (const [key, child] of Object.entries(node)) {
      ids.push(`${prefix}.${key}`);
      if (child !== undefined) walk(`${prefix}.${key}`, child);
    }
  };
  walk(machineId, value);
  return ids;
}

/** The id of the machine an actor runs, if it runs one (a spawned POST stream: `postStream`). */
export function machineIdOf(actorRef: unknown): string | undefined {
  if (typeof actorRef !== 'object' || actorRef === null || !('logic' in actorRef)) return undefined;
  const logic: unknown = actorRef.logic;
  if (typeof logic !== 'object' || logic === null || !('id' in logic)) return undefined;
  return typeof logic.id === 'string' ? logic.id : undefined;
}

/** What runs of one chart touched; the machines it spawned are covered alongside, by machine id. */
export class Coverage {
  readonly states = new Set<string>();
  readonly transitions = new Set<string>();
  /** The spawned and invoked machines' coverage (POST streams, the standalone stream), by machine id. */
  readonly children = new Map<string, Coverage>();

  constructor(readonly machineId: string) {}

  addValue(value: StateValue): void {
    for (const id of stateIdsOfValue(this.machineId, value)) this.states.add(id);
  }

  child(machineId: string): Coverage {
    let coverage = this.children.get(machineId);
    if (coverage === undefined) {
      coverage = new Coverage(machineId);
      this.children.set(machineId, coverage);
    }
    return coverage;
  }

  /** An inspection observer recording the root actor's microsteps, and its child machines' apart. */
  readonly inspect = (event: InspectionEvent): void => {
    if (event.type !== '@xstate.microstep') return;
    const machineId = event.actorRef.sessionId === event.rootId ? this.machineId : machineIdOf(event.actorRef);
    if (machineId === undefined) return;
    const target = machineId === this.machineId ? this : this.child(machineId);
    for (const transition of event._transitions) target.transitions.add(transitionKey(transition));
    const value = (event.snapshot as { value?: StateValue }).value;
    if (value !== undefined) target.addValue(value);
  };

  merge(other: Coverage): void {
    for (const id of other.states) this.states.add(id);
    for (const key of other.transitions) this.transitions.add(key);
    for (const [machineId, coverage] of other.children) this.child(machineId).merge(coverage);
  }
}

/** The step xstate/graph puts first in every path: the machine's own start, not a world event. */
export const isInit = (event: { type: string }): boolean => event.type === 'xstate.init';

/** Replays a path's events on a fresh actor of the model itself, recording the states and transitions it goes through. */
export function modelCoverageOf(model: AnyStateMachine, input: unknown, steps: readonly { event: { type: string } }[]): Coverage {
  const coverage = new Coverage(model.id);
  const actor = createActor(model, { input, inspect: coverage.inspect });
  actor.start();
  coverage.addValue((actor.getSnapshot() as { value: StateValue }).value);
  for (const step of steps) if (!isInit(step.event)) actor.send(step.event);
  actor.stop();
  return coverage;
}
