/**
 * U8: watch a transport live in the Stately inspector from Node, through `@statelyai/inspect`'s
 * own server bridge (`createInspectorServer`) and its WebSocket inspector. `@statelyai/inspect` is
 * an optional peer: it is loaded only here, when asked for. What the inspector sees is what every
 * observer of the transport sees: redacted events (X3, src/redaction.ts).
 */
import type { InspectionEvent, Observer } from 'xstate';
import { McpTransportError } from '../../machines/errors.js';

export interface LiveInspectionOptions {
  /** The bridge's port (default 8080). `@statelyai/inspect`'s bridge listens on every interface of this host. */
  port?: number | undefined;
  /** Open the inspector page in the default browser (default false: the URL is returned to print). */
  open?: boolean | undefined;
}

export interface LiveInspection {
  /** Pass as the transport's `inspect` option. */
  readonly inspect: Observer<InspectionEvent>;
  /** The page that shows the Stately inspector, fed by the bridge. */
  readonly url: string;
  /** Stops the inspector's connection and the bridge. */
  stop(): void;
}

interface InspectModule {
  createWebSocketInspector(options: { url: string }): { inspect: Observer<InspectionEvent>; stop(): void };
}
interface InspectServerModule {
  createInspectorServer(options: { port: number; autoOpen: boolean }): { stop(): void };
}

// A name in a variable: bundlers and the CommonJS build leave the optional peer alone until asked for.
// The comments: webpack would make a context module of the expression and warn 'Critical dependency'; Vite before 8 warns too.
const load = (name: string): Promise<unknown> => import(/* webpackIgnore: true */ /* @vite-ignore */ name);

/** Starts the bridge on 127.0.0.1:`port` and an inspector connected to it. */
export async function inspectLive(options: LiveInspectionOptions = {}): Promise<LiveInspection> {
  let inspect: InspectModule;
  let server: InspectServerModule;
  try {
    [inspect, server] = (await Promise.all([load('@statelyai/inspect'), load('@statelyai/inspect/server')])) as [
      InspectModule,
      InspectServerModule,
    ];
  } catch (cause) {
    throw new McpTransportError(
      'live inspection needs the optional peer dependency @statelyai/inspect (npm install -D @statelyai/inspect)',
      { cause },
    );
  }
  const port = options.port ?? 8080;
  const bridge = server.createInspectorServer({ port, autoOpen: options.open ?? false });
  const inspector = inspect.createWebSocketInspector({ url: `ws://127.0.0.1:${port}` });
  return {
    inspect: inspector.inspect,
    url: `http://localhost:${port}`,
    stop() {
      inspector.stop();
      bridge.stop();
    },
  };
}
