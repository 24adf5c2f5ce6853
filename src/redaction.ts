/**
 * X3: the one path every inspection observer is handed events through. Whatever watches the
 * chart (the `inspect` option, `transport.actor.system.inspect(…)`, `@statelyai/inspect`'s
 * inspectors, the JSONL recorder, the chart view, the CLI) sees a redacted copy: session IDs as
 * fingerprints, no token, `Authorization`, cookie or DPoP value, no I/O handle, and messages as
 * their method and id unless the user opts in to bodies. Tokens are not chart context at all (the
 * I/O layer holds them, src/actors.ts); this module is what keeps session IDs and bodies out.
 */
import type { InspectionEvent, Observer } from 'xstate';
import { fingerprint } from '../machines/connection/messages.js';

/** The `inspect` option: an observer (or a function), or one with what it may see. */
export type InspectOption = Observer<InspectionEvent> | ((event: InspectionEvent) => void) | InspectOptions;

export interface InspectOptions {
  observer: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** Message bodies (requests, responses, the cached initialize), still redacted. Default false: method and id only. */
  bodies?: boolean | undefined;
}

/** Keys whose value is a session ID: shown as its fingerprint. */
const sessionKey = /sessionid$|^mcp-session-id$/i;
/** Keys whose value is a credential: never shown. */
const secretKey =
  /^(authorization|proxy-authorization|cookie|set-cookie|dpop|access_token|refresh_token|id_token|tokens|client_secret|code_verifier)$/i;
/** Keys whose value is a message: its method and id, or (opted in) the whole of it, redacted. */
const messageKey = /^(message|response|initializeRequest|discover)$/;
/** Keys whose value is a URL that may carry a session in its query (the legacy transport's endpoint). */
const endpointKey = /endpoint$/i;
/** Keys whose value is a handle of the I/O or the caller: left out. */
const handleKey = /^(ticket|sink|stream|seenIds|io|plane|onResumptionToken)$/;

const redacted = '‹redacted›';

/**
 * A session ID as its fingerprint; one already made (an event redacted once, then recorded) is
 * kept, so a recording of a redacted event names the same session as the transport's own events.
 */
export function sessionFingerprint(value: string | undefined): string | undefined {
  return value !== undefined && /^#[0-9a-f]{8}$/.test(value) ? value : fingerprint(value);
}

/** A bearer token written into a string (an error message, a header value). */
function scrub(text: string): string {
  return text.replace(/(Bearer|DPoP)\s+[^\s"',;]+/gi, `$1 ${redacted}`);
}

/** A message as its method and id only. */
export function summarize(message: unknown): unknown {
  if (Array.isArray(message)) return message.slice(0, 50).map(summarize);
  if (typeof message !== 'object' || message === null) return undefined;
  const m = message as { method?: unknown; id?: unknown; error?: unknown };
  return {
    ...(typeof m.method === 'string' ? { method: m.method } : {}),
    ...(m.id !== undefined ? { id: m.id } : {}),
    ...(m.error !== undefined ? { error: true } : {}),
  };
}

/**
 * A copy safe to hand to an observer: plain data only (no function, no handle), session IDs
 * fingerprinted, credentials removed, messages summarized unless `bodies`.
 */
export function redact(value: unknown, bodies = false, depth = 0): unknown {
  if (typeof value === 'string') return scrub(value);
  if (typeof value === 'function' || typeof value === 'symbol') return undefined;
  if (typeof value !== 'object' || value === null) return value;
  if (depth > 6) return '…';
  if (value instanceof Error) return { name: value.name, message: scrub(value.message) };
  if (value instanceof Set) return { size: value.size };
  if (Array.isArray(value)) return value.slice(0, 50).map((item) => redact(item, bodies, depth + 1));
  // An actor (a child in a snapshot): its id only.
  if ('sessionId' in value && 'send' in value && typeof value.send === 'function') return { id: (value as { id?: unknown }).id };
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (typeof item === 'function' || handleKey.test(key)) continue;
    if (sessionKey.test(key)) out[key] = typeof item === 'string' ? sessionFingerprint(item) : redact(item, bodies, depth + 1);
    // A flag that credentials exist (`options.authorization`) is no secret; their value is.
    else if (secretKey.test(key)) out[key] = typeof item === 'boolean' || item === undefined ? item : redacted;
    else if (endpointKey.test(key) && typeof item === 'string') out[key] = item.replace(/\?.*$/, `?${redacted}`);
    else if (messageKey.test(key)) out[key] = bodies ? redact(item, bodies, depth + 1) : summarize(item);
    else out[key] = redact(item, bodies, depth + 1);
  }
  return out;
}

/** An event with its type kept and its payload redacted. */
function redactEvent(event: { type: string }, bodies: boolean): { type: string } {
  return { ...(redact(event, bodies) as Record<string, unknown>), type: event.type };
}

/** The part of a snapshot an observer reads, redacted: value, status, tags, context, children's ids. */
function redactSnapshot(snapshot: unknown, bodies: boolean): unknown {
  if (typeof snapshot !== 'object' || snapshot === null) return snapshot;
  const s = snapshot as {
    value?: unknown;
    status?: unknown;
    tags?: unknown;
    context?: unknown;
    children?: unknown;
    error?: unknown;
    output?: unknown;
  };
  const children: Record<string, { id: string }> = {};
  if (typeof s.children === 'object' && s.children !== null) for (const id of Object.keys(s.children)) children[id] = { id };
  return {
    value: s.value,
    status: s.status,
    ...(s.tags instanceof Set ? { tags: new Set(s.tags as Set<string>) } : {}),
    context: redact(s.context, bodies),
    children,
    ...(s.error === undefined ? {} : { error: redact(s.error, bodies) }),
    ...(s.output === undefined ? {} : { output: redact(s.output, bodies) }),
  };
}

/** An actor as an observer may see it: everything it has, but its snapshot redacted. */
function redactedRef<R extends object>(ref: R, bodies: boolean, refs: WeakMap<object, object>): R {
  let proxy = refs.get(ref) as R | undefined;
  if (proxy === undefined) {
    proxy = new Proxy(ref, {
      get(target, key, receiver) {
        if (key === 'getSnapshot') return () => redactSnapshot((target as { getSnapshot(): unknown }).getSnapshot(), bodies);
        if (key === '_parent') {
          const parent = (target as { _parent?: object })._parent;
          return parent === undefined ? undefined : redactedRef(parent, bodies, refs);
        }
        const field: unknown = Reflect.get(target, key, receiver);
        return typeof field === 'function' ? (field as (...args: unknown[]) => unknown).bind(target) : field;
      },
    });
    refs.set(ref, proxy);
  }
  return proxy;
}

/** One inspection event as an observer may see it. */
export function redactInspectionEvent(
  event: InspectionEvent,
  bodies = false,
  refs: WeakMap<object, object> = new WeakMap(),
): InspectionEvent {
  const actorRef = redactedRef(event.actorRef, bodies, refs);
  switch (event.type) {
    case '@xstate.event':
      return {
        ...event,
        actorRef,
        sourceRef: event.sourceRef === undefined ? undefined : redactedRef(event.sourceRef, bodies, refs),
        event: redactEvent(event.event, bodies),
      };
    case '@xstate.snapshot':
    case '@xstate.microstep':
      return {
        ...event,
        actorRef,
        event: redactEvent(event.event, bodies),
        snapshot: redactSnapshot(event.snapshot, bodies) as typeof event.snapshot,
      };
    case '@xstate.action':
      return { ...event, actorRef, action: { type: event.action.type, params: redact(event.action.params, bodies) } };
    default:
      return { ...event, actorRef };
  }
}

/** X3: an observer that hands `option`'s observer only redacted events. */
export function redactingObserver(option: InspectOption): Observer<InspectionEvent> {
  const given = typeof option === 'object' && 'observer' in option ? option : { observer: option, bodies: false };
  const bodies = given.bodies === true;
  const target: Observer<InspectionEvent> = typeof given.observer === 'function' ? { next: given.observer } : given.observer;
  const refs = new WeakMap<object, object>();
  return {
    next: (event) => target.next?.(redactInspectionEvent(event, bodies, refs)),
    error: (error: unknown) => target.error?.(error),
    complete: () => target.complete?.(),
  };
}
