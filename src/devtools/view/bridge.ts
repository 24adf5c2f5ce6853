/**
 * W5: the live bridge from a running transport to the chart view. An inspection observer turns
 * the chart's inspection events into recorder lines (the same lines, redacted the same way, as
 * `createJsonlRecorder` writes) and POSTs them, in order and batched, to the view server's
 * `/ingest` on 127.0.0.1. Only fetch: it runs in Node and in a page alike. A view that is gone
 * costs the transport nothing: lines that cannot be delivered are dropped and counted.
 */
import type { AnyActorRef, InspectionEvent, Observer, Snapshot, Subscription } from 'xstate';
import { createJsonlRecorder, type RecorderOptions } from '../recorder.js';
import type { FetchLike } from '../../http/client.js';

export interface ViewBridgeOptions {
  /** The fetch used to POST lines (default: the global one). */
  fetch?: FetchLike;
  /** What the recorder keeps (default 'lifecycle'). */
  level?: RecorderOptions['level'];
  /** Lines held while the view is slow; past this the oldest are dropped (default 10,000). */
  maxQueue?: number;
}

export interface ViewBridge {
  /** The `inspect` option of a transport, or any XState inspection observer. */
  readonly inspect: Observer<InspectionEvent>;
  /** Settles once every line written so far was delivered or dropped. */
  flush(): Promise<void>;
  /** Stops observing (for `attachToView`) and flushes. */
  close(): Promise<void>;
  /** Lines the view accepted. */
  readonly delivered: number;
  /** Lines lost: the view was unreachable, refused them, or the queue overflowed. */
  readonly dropped: number;
}

/** A bridge whose observer posts recorder lines to the view at `viewUrl` (the page's address). */
export function viewInspector(viewUrl: URL | string, options: ViewBridgeOptions = {}): ViewBridge {
  return createBridge(viewUrl, options, undefined);
}

/** The bridge; `observe` subscribes its observer somewhere and returns how to stop (attachToView). */
function createBridge(
  viewUrl: URL | string,
  options: ViewBridgeOptions,
  observe: ((inspect: Observer<InspectionEvent>) => Subscription) | undefined,
): ViewBridge {
  const ingest = new URL('ingest', viewUrl);
  if (ingest.hostname !== '127.0.0.1' && ingest.hostname !== 'localhost' && ingest.hostname !== '[::1]') {
    throw new TypeError(`the chart view runs on loopback only; ${ingest.host} is not a loopback address`);
  }
  const post: FetchLike = options.fetch ?? ((input, init) => fetch(input, init));
  const maxQueue = options.maxQueue ?? 10_000;
  const queue: string[] = [];
  let delivered = 0;
  let dropped = 0;
  let pumping: Promise<void> | undefined;
  let subscription: Subscription | undefined;

  const pump = async () => {
    while (queue.length > 0) {
      const batch = queue.splice(0, 1_000);
      try {
        const response = await post(ingest, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: batch.join('\n') });
        await response.text();
        if (response.ok) delivered += batch.length;
        else dropped += batch.length;
      } catch {
        dropped += batch.length;
      }
    }
  };
  const kick = () => {
    pumping ??= pump().finally(() => {
      pumping = undefined;
    });
  };
  const write = (line: string) => {
    queue.push(line);
    if (queue.length > maxQueue) dropped += queue.splice(0, queue.length - maxQueue).length;
    kick();
  };

  const inspect = createJsonlRecorder(write, options.level === undefined ? {} : { level: options.level });
  const bridge: ViewBridge = {
    inspect,
    async flush() {
      while (pumping !== undefined) await pumping;
    },
    async close() {
      subscription?.unsubscribe();
      subscription = undefined;
      await bridge.flush();
    },
    get delivered() {
      return delivered;
    },
    get dropped() {
      return dropped;
    },
  };
  subscription = observe?.(inspect);
  return bridge;
}

/**
 * Attaches the view to a transport that is already running: the actors alive now are sent as
 * if they had just started, then every inspection event of the transport's actor system.
 */
export function attachToView(
  transport: { readonly actor: AnyActorRef },
  viewUrl: URL | string,
  options: ViewBridgeOptions = {},
): ViewBridge {
  const root = transport.actor;
  return createBridge(viewUrl, options, (inspect) => {
    const announce = (ref: AnyActorRef, depth: number) => {
      const snapshot: unknown = ref.getSnapshot();
      inspect.next?.({ type: '@xstate.actor', actorRef: ref, rootId: root.sessionId });
      inspect.next?.({
        type: '@xstate.snapshot',
        actorRef: ref,
        rootId: root.sessionId,
        snapshot: ref.getSnapshot() as Snapshot<unknown>,
        event: { type: 'xstate.init' },
      });
      const children = typeof snapshot === 'object' && snapshot !== null && 'children' in snapshot ? snapshot.children : undefined;
      if (typeof children !== 'object' || children === null || depth > 5) return;
      for (const child of Object.values(children as Record<string, AnyActorRef | undefined>)) {
        if (child !== undefined) announce(child, depth + 1);
      }
    };
    announce(root, 0);
    return root.system.inspect(inspect);
  });
}
