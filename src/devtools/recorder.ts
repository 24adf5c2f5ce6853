import type { InspectionEvent, Observer } from 'xstate';
import { redact, sessionFingerprint } from '../redaction.js';
import { transportChartVersion } from './chart-model.js';
import { packageVersion } from './version.js';

/**
 * U4, X1: a recorder of the chart's inspection events as JSON lines, for offline inspection.
 * Session IDs and tokens never appear in it: session IDs become fingerprints, messages are
 * reduced to their method and id (`level: 'messages'` keeps message bodies, still redacted),
 * and tickets, sinks, streams and options are left out.
 */

export interface RecorderOptions {
  /** 'lifecycle' (default): states, events and their methods; 'messages': message bodies too. */
  level?: 'lifecycle' | 'messages';
  /** Clock for the `t` field, ms; defaults to Date.now. */
  now?: () => number;
}

export interface JsonlRecord {
  t: number;
  /**
   * header: the first line (format, package and chart version); actor: an actor started; event: an
   * event it received; snapshot: its state after a step; emit: a fact it told its host (a warning,
   * `session.changed`); timer: a delayed event it scheduled (a backoff, with its delay in ms);
   * cancel: a scheduled one it dropped on leaving the state.
   */
  kind: 'header' | 'actor' | 'event' | 'snapshot' | 'emit' | 'timer' | 'cancel';
  actor: string;
  [key: string]: unknown;
}

/** What the first line of a recording names, so a viewer can tell a recording of another chart (W5). */
export const recordingFormat = 'mcp-xstate-transport/recording@1';

/** The first line of every recording: the format, the package's version and its charts' version. */
export function recordingHeader(now: () => number = Date.now): JsonlRecord {
  return { t: now(), kind: 'header', actor: '', format: recordingFormat, package: packageVersion, chart: transportChartVersion() };
}

function errorSummary(error: unknown): unknown {
  return error instanceof Error ? { name: error.name, message: redact(error.message) } : undefined;
}

/** An actor's id (`post-3`, `standalone`), else its system session id. */
function actorName(ref: { sessionId: string }): string {
  const id = (ref as { id?: unknown }).id;
  return typeof id === 'string' ? id : ref.sessionId;
}

/** Turns one inspection event into a record, or undefined for kinds not recorded. */
export function toRecord(event: InspectionEvent, options: RecorderOptions = {}): JsonlRecord | undefined {
  const t = (options.now ?? Date.now)();
  const actor = actorName(event.actorRef);
  switch (event.type) {
    case '@xstate.actor': {
      // The machine an actor runs (`connection`, `postStream`, …) and who started it, so a viewer draws the right chart.
      const ref = event.actorRef as { logic?: { id?: unknown; root?: unknown }; _parent?: { sessionId: string } };
      const machine = ref.logic?.root !== undefined && typeof ref.logic.id === 'string' ? ref.logic.id : undefined;
      return {
        t,
        kind: 'actor',
        actor,
        ...(machine === undefined ? {} : { machine }),
        ...(ref._parent === undefined ? {} : { parent: actorName(ref._parent) }),
      };
    }
    case '@xstate.action': {
      const { type, params } = event.action as { type: string; params?: unknown };
      if (typeof params !== 'object' || params === null) return undefined;
      if (type === 'xstate.emit' && 'event' in params) {
        const { type: emitted, ...payload } = params.event as { type: string } & Record<string, unknown>;
        const details = redact(payload, options.level === 'messages') as Record<string, unknown>;
        if ('error' in payload) details.error = errorSummary(payload.error);
        return { t, kind: 'emit', actor, event: emitted, ...(Object.keys(details).length > 0 ? { details } : {}) };
      }
      if (type === 'xstate.raise' && 'delay' in params && typeof params.delay === 'number' && 'id' in params) {
        return { t, kind: 'timer', actor, id: params.id, delay: params.delay };
      }
      if (type === 'xstate.cancel' && 'sendId' in params) return { t, kind: 'cancel', actor, id: params.sendId };
      return undefined;
    }
    case '@xstate.event': {
      const { type, ...payload } = event.event as { type: string } & Record<string, unknown>;
      const details = redact(payload, options.level === 'messages') as Record<string, unknown>;
      if ('error' in payload) details.error = errorSummary(payload.error);
      return {
        t,
        kind: 'event',
        actor,
        source: event.sourceRef === undefined ? undefined : actorName(event.sourceRef),
        event: type,
        ...(Object.keys(details).length > 0 ? { details } : {}),
      };
    }
    case '@xstate.snapshot': {
      const snapshot = event.snapshot as {
        value?: unknown;
        status?: string;
        tags?: Set<string>;
        context?: Record<string, unknown>;
        children?: Record<string, unknown>;
      };
      if (snapshot.value === undefined) return undefined;
      const context = snapshot.context ?? {};
      return {
        t,
        kind: 'snapshot',
        actor,
        value: snapshot.value,
        status: snapshot.status,
        tags: snapshot.tags ? [...snapshot.tags].sort() : [],
        // Which children are alive: a viewer drops a stream actor once its parent no longer holds it.
        children: Object.keys(snapshot.children ?? {}),
        ...(typeof context.attempt === 'number' ? { attempt: context.attempt } : {}),
        ...('sessionId' in context ? { session: sessionFingerprint(context.sessionId as string | undefined) } : {}),
        ...('error' in context && context.error !== undefined ? { error: errorSummary(context.error) } : {}),
      };
    }
    default:
      return undefined;
  }
}

/**
 * An inspection observer (the `inspect` option) writing one JSON line per recorded event, after
 * a header line naming the package and chart version (written at once).
 */
export function createJsonlRecorder(write: (line: string) => void, options: RecorderOptions = {}): Observer<InspectionEvent> {
  write(JSON.stringify(recordingHeader(options.now)));
  return {
    next(event) {
      const record = toRecord(event, options);
      if (record !== undefined) write(JSON.stringify(record));
    },
  };
}
