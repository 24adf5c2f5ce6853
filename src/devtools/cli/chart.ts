/**
 * The connection chart, as a line of text per change: state, tags, and for a stream that is
 * waiting to reconnect, which attempt it is waiting for and since when.
 */
import type { AnyActorRef, StateValue } from 'xstate';
import type { StreamableHTTPClientTransport } from '../../transport.js';

/** `{ open: { session: 'active', standalone: 'active' } }` → `open.session.active + open.standalone.active`. */
export function renderStateValue(value: StateValue): string {
  const leaves = (v: StateValue, prefix: string): string[] =>
    typeof v === 'string'
      ? [`${prefix}${v}`]
      : Object.entries(v).flatMap(([key, child]) =>
          child === undefined || (typeof child === 'object' && Object.keys(child).length === 0)
            ? [`${prefix}${key}`]
            : leaves(child, `${prefix}${key}.`),
        );
  return leaves(value, '').join(' + ');
}

/** What a snapshot of any of the charts shows; read without knowing which chart it is. */
interface SeenSnapshot {
  value?: StateValue;
  tags?: Set<string>;
  context?: unknown;
}

function attemptOf(context: unknown): number | undefined {
  if (typeof context !== 'object' || context === null || !('attempt' in context)) return undefined;
  return typeof context.attempt === 'number' ? context.attempt : undefined;
}

/** W3: the wait a stream chart planned (`context.wait`), while it carries the tag `waiting`. */
function waitOf(snapshot: SeenSnapshot): { attempt: number; delayMs: number; dueAt: number } | undefined {
  if (snapshot.tags?.has('waiting') !== true) return undefined;
  const context = snapshot.context;
  if (typeof context !== 'object' || context === null || !('wait' in context)) return undefined;
  const wait = context.wait;
  if (typeof wait !== 'object' || wait === null || !('attempt' in wait) || !('delayMs' in wait) || !('dueAt' in wait)) return undefined;
  const { attempt, delayMs, dueAt } = wait;
  return typeof attempt === 'number' && typeof delayMs === 'number' && typeof dueAt === 'number' ? { attempt, delayMs, dueAt } : undefined;
}

/**
 * One snapshot as text: `open.session.active + open.standalone.active  [connected]`, and for a
 * stream in backoff `backoff.timed  [waiting]  (attempt 2, next in 1.5 s)`: the wait the chart
 * planned (W3). The one place that decides what a line shows.
 */
export function describeSnapshot(snapshot: SeenSnapshot): string {
  const state = snapshot.value === undefined ? '?' : renderStateValue(snapshot.value);
  const tags = [...(snapshot.tags ?? [])].sort();
  const wait = waitOf(snapshot);
  const attempt = attemptOf(snapshot.context);
  const waiting =
    wait !== undefined
      ? `  (attempt ${wait.attempt}, next in ${(wait.delayMs / 1000).toFixed(1)} s)`
      : /backoff|degraded|retrying/.test(state) && attempt !== undefined
        ? `  (attempt ${attempt})`
        : '';
  return `${state}${tags.length > 0 ? `  [${tags.join(', ')}]` : ''}${waiting}`;
}

export interface ChartLine {
  /** `state` for the connection chart, `standalone` for the standalone stream. */
  chart: 'state' | 'standalone';
  text: string;
  /** The state path alone, for scripts. */
  state: string;
  tags: string[];
  /** How long the previous state of this chart lasted, in ms. */
  previousMs: number;
}

/** Whether a rendered state (`listening.unwatched`) is in `state` (`listening`) or below it. */
export function inState(rendered: string, state: string): boolean {
  return rendered.split(' + ').some((leaf) => leaf === state || leaf.startsWith(`${state}.`));
}

/**
 * Calls `print` on every change of the connection chart and of its standalone stream child.
 * Returns the current state (for progress lines) and a way to wait for the standalone stream.
 */
export function watchChart(transport: StreamableHTTPClientTransport, print: (line: ChartLine) => void) {
  const last = { state: { text: '', since: performance.now() }, standalone: { text: '', since: performance.now() } };
  let watchedChild: AnyActorRef | undefined;
  let childState = '';
  const childWaiters: { state: string; resolve: () => void }[] = [];

  const report = (chart: ChartLine['chart'], snapshot: SeenSnapshot) => {
    const text = describeSnapshot(snapshot);
    if (text === last[chart].text) return;
    const now = performance.now();
    const previousMs = last[chart].text === '' ? 0 : Math.round(now - last[chart].since);
    last[chart] = { text, since: now };
    const state = snapshot.value === undefined ? '?' : renderStateValue(snapshot.value);
    print({ chart, text, state, tags: [...(snapshot.tags ?? [])].sort(), previousMs });
    if (chart !== 'standalone') return;
    childState = state;
    for (const waiter of childWaiters.filter((w) => inState(state, w.state))) {
      childWaiters.splice(childWaiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };

  const onChild = (snapshot: SeenSnapshot) => {
    report('standalone', snapshot);
  };
  const onSnapshot = () => {
    const snapshot = transport.actor.getSnapshot();
    report('state', snapshot);
    const child: AnyActorRef | undefined = snapshot.children.standalone;
    if (child !== undefined && child !== watchedChild) {
      watchedChild = child;
      last.standalone.text = '';
      onChild(child.getSnapshot() as SeenSnapshot);
      child.subscribe({ next: onChild, error: () => undefined });
    }
  };

  onSnapshot();
  const subscription = transport.actor.subscribe({ next: onSnapshot, error: () => undefined });
  return {
    /** The connection chart's line now, for a progress message. */
    current: (): string => last.state.text,
    standalone(state: string): Promise<void> {
      if (inState(childState, state)) return Promise.resolve();
      return new Promise((resolve) => childWaiters.push({ state, resolve }));
    },
    stop: () => {
      subscription.unsubscribe();
    },
  };
}
