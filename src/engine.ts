/**
 * The chart engine: xstate and the charts, with their I/O actors (src/actors.ts). Imported eagerly
 * by the Node entry, `./devtools` and `./testing`; loaded by the browser entry's first `start()`
 * (src/engine-registry.ts).
 */
import { createActor } from 'xstate';
import { attachIo, providedConnectionMachine } from './actors.js';
import type { Engine } from './engine-registry.js';

export const engine: Engine = {
  connection(io, input, inspect) {
    const actor = createActor(providedConnectionMachine, {
      systemId: 'connection',
      input,
      ...(inspect === undefined ? {} : { inspect }),
    });
    attachIo(actor.system, io);
    return actor;
  },
};
