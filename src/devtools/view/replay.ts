/**
 * W5: what a recording means at each step, for the chart view. Pure functions over the JSON
 * lines `createJsonlRecorder` writes: parse a recording, fold it up to a record into a frame
 * (the live actors, their states, their pending timers), name the active state paths, and
 * describe a record as one log line.
 *
 * The page runs these same functions: they are sent to the browser as their source text
 * (`replayFunctions`), so each must be self-contained: no imports at run time, no module-level
 * values, and calls only to other functions of this list.
 */

/** One recorded line (see `JsonlRecord` in src/inspect.ts). */
export interface RecordLine {
  t: number;
  kind: string;
  actor: string;
  [key: string]: unknown;
}

export interface Recording {
  /** The header line, when the recording has one (recordings before W5 have none). */
  header: RecordLine | undefined;
  records: RecordLine[];
  /** Lines that were skipped, and why: at most a few named, then a count. */
  problems: string[];
}

/** A delayed event an actor scheduled and has neither received nor cancelled yet. */
export interface PendingTimer {
  id: string;
  delay: number;
  /** Recording time at which it is due. */
  due: number;
}

export interface ActorFrame {
  name: string;
  /** The machine it runs (`connection`, `postStream`, `standaloneStream`), when it runs one. */
  machine: string | undefined;
  parent: string | undefined;
  value: unknown;
  status: string | undefined;
  tags: string[];
  session: string | undefined;
  attempt: number | undefined;
  children: string[];
  timers: PendingTimer[];
  /** Index of the actor's last snapshot record. */
  since: number;
}

export interface Frame {
  index: number;
  t: number;
  /** Actors alive at this record, machines only, in the order they started. */
  actors: ActorFrame[];
}

/** Parses a JSONL recording; bad lines are skipped and named, never fatal. */
export function parseRecording(text: string): Recording {
  const records: RecordLine[] = [];
  const problems: string[] = [];
  let header: RecordLine | undefined;
  let skipped = 0;
  const note = (line: number, why: string) => {
    skipped++;
    if (problems.length < 5) problems.push(`line ${line}: ${why}`);
  };
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] ?? '').trim();
    if (line === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      note(i + 1, 'not JSON');
      continue;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      note(i + 1, 'not a JSON object');
      continue;
    }
    const record = value as Record<string, unknown>;
    if (typeof record.t !== 'number' || typeof record.kind !== 'string' || typeof record.actor !== 'string') {
      note(i + 1, 'not a recorder line (t, kind and actor are missing)');
      continue;
    }
    const parsed = record as RecordLine;
    if (parsed.kind === 'header') {
      if (header === undefined && records.length === 0) header = parsed;
      else note(i + 1, 'a second header (two recordings joined?)');
      continue;
    }
    records.push(parsed);
  }
  if (skipped > problems.length) problems.push(`… ${skipped - problems.length} more lines skipped`);
  return { header, records, problems };
}

/** The machine of an actor whose record did not name one (recordings before W5): by its name. */
export function guessMachine(name: string, parent: string | undefined): string | undefined {
  if (name === 'standalone') return 'standaloneStream';
  if (/^post-\d+$/.test(name)) return 'postStream';
  return parent === undefined ? 'connection' : undefined;
}

/** Every active state path of a state value, parents included: `{ open: { session: 'active' } }` → `open`, `open.session`, `open.session.active`. */
export function activePaths(value: unknown, prefix = ''): string[] {
  if (typeof value === 'string') return [prefix + value];
  if (typeof value !== 'object' || value === null) return [];
  const out: string[] = [];
  for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
    out.push(prefix + key);
    out.push(...activePaths(child, `${prefix}${key}.`));
  }
  return out;
}

/** The active leaves of a state value, as the log shows them: `open.session.active + open.standalone.active`. */
export function leafText(value: unknown): string {
  const paths = activePaths(value);
  return paths.filter((path) => !paths.some((other) => other.startsWith(`${path}.`))).join(' + ');
}

/** The state of every actor after `records[index]` (index -1: before the first record). */
export function frameAt(records: readonly RecordLine[], index: number): Frame {
  const actors = new Map<string, ActorFrame>();
  /** Where each actor (this incarnation of its name) was announced. */
  const born = new Map<ActorFrame, number>();
  const last = Math.min(index, records.length - 1);
  const strings = (value: unknown): string[] =>
    Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
  for (let i = 0; i <= last; i++) {
    const record = records[i];
    if (record === undefined) continue;
    let actor = actors.get(record.actor);
    if (record.kind === 'actor' || actor === undefined) {
      const parent = typeof record.parent === 'string' ? record.parent : undefined;
      const machine = typeof record.machine === 'string' ? record.machine : guessMachine(record.actor, parent);
      actor = {
        name: record.actor,
        machine,
        parent,
        value: undefined,
        status: undefined,
        tags: [],
        session: undefined,
        attempt: undefined,
        children: [],
        timers: [],
        since: i,
      };
      // An actor record restarts the actor of that name (ids are reused: `post-1` again and again).
      actors.delete(record.actor);
      actors.set(record.actor, actor);
      born.set(actor, i);
      if (record.kind === 'actor') continue;
    }
    if (record.kind === 'snapshot') {
      actor.value = record.value;
      actor.status = typeof record.status === 'string' ? record.status : undefined;
      actor.tags = strings(record.tags);
      actor.session = typeof record.session === 'string' ? record.session : undefined;
      actor.attempt = typeof record.attempt === 'number' ? record.attempt : undefined;
      actor.children = strings(record.children);
      actor.since = i;
    } else if (record.kind === 'timer' && typeof record.id === 'string' && typeof record.delay === 'number') {
      const id = record.id;
      actor.timers = actor.timers.filter((timer) => timer.id !== id);
      actor.timers.push({ id, delay: record.delay, due: record.t + record.delay });
    } else if (record.kind === 'cancel' || record.kind === 'event') {
      const id = record.kind === 'cancel' ? record.id : record.event;
      actor.timers = actor.timers.filter((timer) => timer.id !== id);
    }
  }
  // Alive: a root, or a child its parent still holds (or spawned after the parent's last
  // snapshot: a child starts, and is recorded, before the snapshot that lists it); and not ended.
  const alive = (actor: ActorFrame, depth: number): boolean => {
    if (actor.status === 'done' || actor.status === 'error' || actor.status === 'stopped') return false;
    if (actor.parent === undefined) return true;
    const parent = actors.get(actor.parent);
    if (parent === undefined || depth > 10) return false;
    const spawnedSince = (born.get(actor) ?? -1) > parent.since;
    return (parent.children.includes(actor.name) || spawnedSince) && alive(parent, depth + 1);
  };
  return {
    index: last,
    t: records[last]?.t ?? records[0]?.t ?? 0,
    actors: [...actors.values()].filter((actor) => actor.machine !== undefined && actor.value !== undefined && alive(actor, 0)),
  };
}

/** `xstate.after.reconnectDelay.postStream.backoff.timed` → `after reconnectDelay`. */
export function timerLabel(id: string): string {
  const match = /^xstate\.after\.([^.]+)\./.exec(id);
  return match?.[1] === undefined ? id : `after ${match[1]}`;
}

/** A record as one line of the log (times are shown beside it, relative to the first record). */
export function describeRecord(record: RecordLine): string {
  const details = typeof record.details === 'object' && record.details !== null ? (record.details as Record<string, unknown>) : {};
  const errorText = (error: unknown): string => {
    if (typeof error !== 'object' || error === null) return '';
    const e = error as { name?: unknown; message?: unknown };
    return `${typeof e.name === 'string' ? e.name : 'Error'}: ${typeof e.message === 'string' ? e.message : ''}`;
  };
  const messageText = (message: unknown): string => {
    if (Array.isArray(message)) return message.map(messageText).join(', ');
    if (typeof message !== 'object' || message === null) return '';
    const m = message as { method?: unknown; id?: unknown };
    const method = typeof m.method === 'string' ? m.method : 'response';
    return typeof m.id === 'string' || typeof m.id === 'number' ? `${method} #${String(m.id)}` : method;
  };
  switch (record.kind) {
    case 'actor':
      return `started ${typeof record.machine === 'string' ? record.machine : 'an actor'}`;
    case 'snapshot': {
      const tags = Array.isArray(record.tags) && record.tags.length > 0 ? ` [${record.tags.join(', ')}]` : '';
      const session = typeof record.session === 'string' ? ` session ${record.session}` : '';
      const attempt = typeof record.attempt === 'number' && record.attempt > 0 ? ` attempt ${record.attempt}` : '';
      const status = typeof record.status === 'string' && record.status !== 'active' ? ` (${record.status})` : '';
      return `→ ${leafText(record.value)}${tags}${status}${session}${attempt}`;
    }
    case 'event': {
      const event = typeof record.event === 'string' ? record.event : '?';
      const parts: string[] = [];
      if ('message' in details) parts.push(messageText(details.message));
      if ('error' in details) parts.push(errorText(details.error));
      if (typeof details.sessionId === 'string') parts.push(`session ${details.sessionId}`);
      const name = event.startsWith('xstate.after.') ? `${timerLabel(event)} (due)` : event;
      return `${name}${parts.length > 0 ? `: ${parts.filter((p) => p !== '').join('; ')}` : ''}`;
    }
    case 'emit': {
      const event = typeof record.event === 'string' ? record.event : '?';
      if (event === 'session.changed') {
        return `emit session.changed ${typeof details.previous === 'string' ? details.previous : 'none'} → ${typeof details.current === 'string' ? details.current : 'none'}`;
      }
      return `emit ${event}${'error' in details ? `: ${errorText(details.error)}` : ''}`;
    }
    case 'timer':
      return `${timerLabel(String(record.id))} in ${String(record.delay)} ms`;
    case 'cancel':
      return `${timerLabel(String(record.id))} cancelled`;
    default:
      return record.kind;
  }
}

/** The functions the page runs, in an order where each is defined before the page starts. */
export const replayFunctions = [parseRecording, guessMachine, activePaths, leafText, frameAt, timerLabel, describeRecord] as const;
