import type { ChartOptions } from './types.js';

type IdleArgs = { context: { options: ChartOptions } };

/**
 * R9: the idle watch both stream charts run while their reader (actor id `reader`) reads: every
 * streamIdleTimeout ms the reader is asked whether anything arrived (action `checkIdle`); a silent
 * stream is a drop. Each chart registers the guard and delay with `.extend(idleWatch)` and puts
 * `idleWatchStates` in its reading state.
 */
export const idleWatch = {
  guards: {
    watchesIdle: ({ context }: IdleArgs) => context.options.streamIdleTimeout !== undefined,
  },
  delays: {
    streamIdleTimeout: ({ context }: IdleArgs) => context.options.streamIdleTimeout ?? 0,
  },
};

export const idleWatchStates = {
  choosing: { always: [{ guard: 'watchesIdle', target: 'watching' }, { target: 'unwatched' }] },
  watching: { after: { streamIdleTimeout: { target: 'watching', reenter: true, actions: 'checkIdle' } } },
  unwatched: {},
} as const;
