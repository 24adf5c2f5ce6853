/**
 * The one driver of the model executors (executor.ts: the connection chart, stream-executor.ts: the
 * stream machines, modern-executor.ts: the 2026-07-28 branch): a world is a real transport and the
 * scripted server a path runs against. The driver gives the path its executors (each model event
 * done by the world's `perform`) and its state check (the world's `check`), waits for the world to
 * reach what a step expects (bounded, waking on every change of the actor or the server), keeps the
 * real charts' coverage, and ends the world. Each executor says only what its events do and what
 * it observes.
 */
import { expect } from 'vitest';
import type { EventObject, InspectionEvent, Snapshot } from 'xstate';
import type { StatePath, TestParam } from 'xstate/graph';
import type { StreamableHTTPClientTransport } from '../../src/index.js';
import { Coverage } from './coverage.js';
import type { ScriptedServer } from '../support/scripted-server.js';

/**
 * Longest wait for the transport and the server to reach what a step expects (a bound, not a timing:
 * a step ends as soon as its state is reached). The slowest step is the idle watch's (R9): a silence
 * is seen at the second check after the last byte, up to two idle periods (2 s in the stream paths),
 * and a busy machine delays timers besides (3 s was once too short in a clean-clone CI run).
 */
const SETTLE_MS = 10_000;

/** JSON with object keys sorted, so that equal state values compare equal as text. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_, item: unknown) =>
    typeof item === 'object' && item !== null && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => a.localeCompare(b)))
      : item,
  );
}

/** Watches a transport's actor: wakes waiters on every change, and keeps the error it stopped with. */
class ActorWatch {
  /** Why the actor stopped with an error, if it did. */
  crash: Error | undefined;
  private waiting: (() => void)[] = [];

  constructor(actor: { subscribe(observer: { next: () => void; error: (error: unknown) => void }): unknown }) {
    const wake = () => {
      const woken = this.waiting;
      this.waiting = [];
      for (const resolve of woken) resolve();
    };
    actor.subscribe({
      next: wake,
      // An actor that throws stops; the error is reported by the step that caused it.
      error: (error: unknown) => {
        this.crash = error instanceof Error ? error : new Error(String(error));
        wake();
      },
    });
  }

  /** Waits (bounded: SETTLE_MS) until `done()` holds or the actor crashed, waking on every change of the actor or the server. */
  async settle(puppet: ScriptedServer, done: () => boolean): Promise<void> {
    const deadline = Date.now() + SETTLE_MS;
    for (let round = 0; round < 10_000 && !done() && this.crash === undefined && Date.now() <= deadline; round++) {
      await Promise.race([
        puppet.nextChange(),
        new Promise<void>((resolve) => {
          this.waiting.push(resolve);
        }),
        new Promise<void>((resolve) => setTimeout(resolve, 10)),
      ]);
    }
  }
}

/**
 * The `inspect` option of a transport built before its world: what it reports goes to the world's
 * coverage once `attach` is called (the transport's first events wait for it).
 */
export function lateInspector(): { inspect: (event: InspectionEvent) => void; attach: (coverage: Coverage) => void } {
  let target: Coverage | undefined;
  return {
    inspect: (event) => {
      target?.inspect(event);
    },
    attach: (coverage) => {
      target = coverage;
    },
  };
}

/** The host's network signal (W2), which every model's world drives the same way. */
type HostNetworkEvent = { type: 'net.offline' } | { type: 'net.online' };

/** A world one path runs in: a real transport and the scripted server, each model event done for real. */
export abstract class ModelWorld<S extends Snapshot<unknown>, E extends EventObject> {
  readonly coverage = new Coverage('connection');
  private readonly watch: ActorWatch;

  protected constructor(
    readonly puppet: ScriptedServer,
    readonly transport: StreamableHTTPClientTransport,
    /** The host's network signal the transport was given (`manualNetwork`): `net.offline` and `net.online` set it. */
    private readonly network: { setOnline(online: boolean): void },
    /** The model events this world does (each path's configuration names them). */
    private readonly eventTypes: readonly E['type'][],
  ) {
    this.coverage.addValue(transport.actor.getSnapshot().value);
    this.watch = new ActorWatch(transport.actor);
  }

  /** Does what a model event stands for (the host's network signal is the driver's). */
  protected abstract perform(event: Exclude<E, HostNetworkEvent>): void | Promise<void>;

  /** After each step: the world is what the model's state says. */
  protected abstract check(expected: S): Promise<void>;

  /** The executors and the state check, as `TestPath.test` takes them. */
  params(): TestParam<S, E> {
    const events: NonNullable<TestParam<S, E>['events']> = {};
    // Keyed by the event's type, so each executor gets an event of that type: one of the model's.
    const executors = events as Record<string, ((step: { state: S; event: EventObject }) => Promise<void>) | undefined>;
    for (const type of new Set(this.eventTypes)) {
      executors[type] = async (step) => {
        if (type === 'net.offline' || type === 'net.online') this.network.setOnline(type === 'net.online');
        else await this.perform(step.event as Exclude<E, HostNetworkEvent>);
      };
    }
    return { events, states: { '*': (state) => this.check(state) } };
  }

  /** Waits (bounded) until `done()` holds, then fails the step if the actor stopped with an error. */
  protected async settle(done: () => boolean): Promise<void> {
    await this.watch.settle(this.puppet, done);
    // Let promise reactions of this step (a send refused at once) run before looking at them.
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(this.watch.crash?.message, "the transport's actor stopped with an error").toBeUndefined();
  }

  /** Waits (bounded) until what `observe()` sees equals `wanted` (as canonical JSON); the caller then compares them. */
  protected settleOn(observe: () => unknown, wanted: unknown, before?: () => void): Promise<void> {
    return this.settle(() => {
      before?.();
      return canonical(observe()) === canonical(wanted);
    });
  }

  /** Ends the path: the actor stops (and with it every request and stream), then the server. */
  async dispose(): Promise<void> {
    this.transport.actor.stop();
    await this.puppet.close();
  }
}

/**
 * Runs one path of `model` in the world `open` makes (a fresh transport and server); what the real
 * charts went through is added to `coverage`, up to the failing step if a step fails.
 */
export async function runInWorld<S extends Snapshot<unknown>, E extends EventObject>(
  model: { testPath(path: StatePath<S, E>, params: TestParam<S, E>): Promise<unknown> },
  path: StatePath<S, E>,
  open: () => Promise<ModelWorld<S, E>>,
  coverage: Coverage,
): Promise<void> {
  const world = await open();
  try {
    await model.testPath(path, world.params());
  } finally {
    await world.dispose();
    coverage.merge(world.coverage);
  }
}
