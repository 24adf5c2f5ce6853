/** What the page reads from the connection chart: the tag a badge shows, and state paths. */
import type { SnapshotFrom, StateValue } from 'xstate';
import type { ConnectionMachine } from '../../src/index.js';

export type Status = 'idle' | 'connecting' | 'connected' | 'reconnecting' | 'authorizing' | 'closing' | 'closed' | 'failed';

/** The tags in the order a badge prefers them (a state carries at most one of them today). */
const byPriority = ['failed', 'closed', 'closing', 'authorizing', 'reconnecting', 'connecting', 'connected'] as const;

/** The badge's word for a snapshot: its tag, or `idle` before start(). */
export function statusOf(snapshot: SnapshotFrom<ConnectionMachine>): Status {
  return byPriority.find((tag) => snapshot.hasTag(tag)) ?? 'idle';
}

/** Every active leaf as a dotted path: `{ open: { session: 'active' } }` → `open.session.active`. */
export function statePaths(value: StateValue, prefix = ''): string[] {
  if (typeof value === 'string') return [prefix + value];
  return Object.entries(value).flatMap(([key, child]) =>
    child === undefined || (typeof child === 'object' && Object.keys(child).length === 0)
      ? [prefix + key]
      : statePaths(child, `${prefix}${key}.`),
  );
}
