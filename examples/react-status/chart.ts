/** What the page reads from the connection chart: the tag a badge shows, and state paths. */
import type { StateValue } from 'xstate';
import { connectionStatus, type ConnectionStatus } from '../../src/index.js';

export type Status = ConnectionStatus;

/** The badge's word for a snapshot: its tag (`offline` before `connected`), or `idle` before start(). */
export const statusOf = connectionStatus;

/** Every active leaf as a dotted path: `{ open: { session: 'active' } }` → `open.session.active`. */
export function statePaths(value: StateValue, prefix = ''): string[] {
  if (typeof value === 'string') return [prefix + value];
  return Object.entries(value).flatMap(([key, child]) =>
    child === undefined || (typeof child === 'object' && Object.keys(child).length === 0)
      ? [prefix + key]
      : statePaths(child, `${prefix}${key}.`),
  );
}
