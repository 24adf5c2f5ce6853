/**
 * Where a transport finds its chart engine (xstate and the charts, src/engine.ts), and how it is
 * loaded. The Node entry, `./devtools` and `./testing` register it as they are imported, so
 * `transport.actor` exists from the constructor there. The browser entry does not: the first
 * `start()` (or any other call that needs the chart) loads it, so a page downloads the engine after
 * its first paint, not with it (issue 44, docs/benchmark.md "The page"). `loadEngine()` loads it
 * ahead, for a page that wants `transport.actor` before `start()`.
 */
import type { Actor, InspectionEvent, Observer } from 'xstate';
import type { ConnectionInput, ConnectionMachine } from '../machines/connection/index.js';
import type { TransportIo } from './actors.js';
import { McpTransportError } from '../machines/errors.js';

/** What the facade needs of the engine: one way to make a transport's connection actor. */
export interface Engine {
  /** The connection chart's actor for one transport, its I/O attached, not yet started. */
  connection(io: TransportIo, input: ConnectionInput, inspect: Observer<InspectionEvent> | undefined): Actor<ConnectionMachine>;
}

let registered: Engine | undefined;
let loading: Promise<void> | undefined;

/** Makes the engine available synchronously (an entry that imports it eagerly). */
export function registerEngine(engine: Engine): void {
  registered = engine;
}

/** The engine, if it is loaded. */
export function engineNow(): Engine | undefined {
  return registered;
}

/**
 * Loads the engine (once; a failed load, say a chunk a page could not fetch, is tried again by the
 * next call). After it resolves, every transport's `actor` is there.
 */
export function loadEngine(): Promise<void> {
  if (registered !== undefined) return Promise.resolve();
  loading ??= import('./engine.js').then(
    ({ engine }) => {
      registered ??= engine;
    },
    (error: unknown) => {
      loading = undefined;
      throw new McpTransportError('could not load the transport chart engine (its chunk failed to load)', { cause: error });
    },
  );
  return loading;
}
