/**
 * U8, U10: watch a transport live in the Stately inspector from Node. The events go through
 * `@statelyai/inspect`'s own inspector (`createInspector`, the format its page reads) over a
 * WebSocket to a bridge served here, which relays them to the page, as `@statelyai/inspect/server`
 * does. The bridge is this file's own (on `ws`, the WebSocket library `@statelyai/inspect` brings):
 * it listens on 127.0.0.1 unless told otherwise, a port in use is a typed rejection (never an
 * unhandled 'error' event that ends the host process), and its page says when the hosted inspector
 * cannot be reached and links the local chart view (W5), which needs no internet.
 *
 * `@statelyai/inspect` is an optional peer: it is loaded only here, when asked for. What the
 * inspector sees is what every observer of the transport sees: redacted events (X3,
 * src/redaction.ts).
 */
// Types only: the devtools door is bundled for pages too, so node: modules load when inspectLive runs (Node only).
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import type { InspectionEvent, Observer } from 'xstate';
import { McpTransportError } from '../../machines/errors.js';

export interface LiveInspectionOptions {
  /** The bridge's port (default 8080); 0 picks a free one (`url` says which). */
  port?: number | undefined;
  /** The interface the bridge listens on (default '127.0.0.1': this host only). */
  host?: string | undefined;
  /** Open the inspector page in the default browser (default false: the URL is returned to print). */
  open?: boolean | undefined;
  /** The hosted inspector the page embeds (default https://stately.ai/inspect). */
  inspectorUrl?: string | URL | undefined;
  /** The local chart view (W5) the page links when the hosted inspector cannot be reached. */
  chartViewUrl?: string | URL | undefined;
}

export interface LiveInspection {
  /** Pass as the transport's `inspect` option. */
  readonly inspect: Observer<InspectionEvent>;
  /** The page that shows the Stately inspector, fed by the bridge. */
  readonly url: string;
  /** The port the bridge listens on (the one picked when `port` was 0). */
  readonly port: number;
  /** Stops the inspector's connection and the bridge. */
  stop(): void;
}

/** U10: the bridge could not listen: the port is in use (EADDRINUSE) or not allowed (EACCES). */
export class InspectorPortError extends McpTransportError {
  readonly port: number;
  readonly host: string;
  /** The system's code: 'EADDRINUSE', 'EACCES', … */
  readonly code: string;
  constructor(port: number, host: string, code: string, cause: unknown) {
    const why = code === 'EADDRINUSE' ? 'is in use' : code === 'EACCES' ? 'is not allowed' : `cannot be used (${code})`;
    super(`live inspection: port ${port} on ${host} ${why}: pass another port, or port 0 to pick a free one (CLI: --inspect 0)`, { cause });
    this.port = port;
    this.host = host;
    this.code = code;
  }
}

/** U11: live inspection needs the optional peer `@statelyai/inspect`, and it is not installed. */
export class MissingPeerError extends McpTransportError {
  constructor(
    readonly peer: string,
    cause: unknown,
  ) {
    super(`live inspection needs the optional peer dependency ${peer} (npm install -D ${peer})`, { cause });
  }
}

interface Adapter {
  start?: () => void;
  stop?: () => void;
  send(event: unknown): void;
}
interface InspectModule {
  createInspector(adapter: Adapter): { inspect: Observer<InspectionEvent>; start(): void; stop(): void };
}
interface Socket {
  readonly readyState: number;
  send(data: string): void;
  close(): void;
  terminate(): void;
  on(event: 'message', listener: (data: { toString(): string }) => void): void;
  on(event: 'error' | 'close', listener: () => void): void;
}
interface SocketServer {
  readonly clients: Set<Socket>;
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer, done: (socket: Socket) => void): void;
  on(event: 'error', listener: () => void): void;
  close(): void;
}
interface WsModule {
  WebSocketServer: new (options: { noServer: true; maxPayload: number }) => SocketServer;
  WebSocket: new (url: string) => Socket & {
    onopen: (() => void) | null;
    onerror: (() => void) | null;
    onclose: (() => void) | null;
  };
}

// A name in a variable: bundlers and the CommonJS build leave the optional peer alone until asked for.
// The comments: webpack would make a context module of the expression and warn 'Critical dependency'; Vite before 8 warns too.
const load = (name: string): Promise<unknown> => import(/* webpackIgnore: true */ /* @vite-ignore */ name);

/** `ws` as ESM (named exports) or through the CommonJS interop (a default). */
function wsExports(module: unknown): WsModule {
  const named = module as Partial<WsModule> & { default?: Partial<WsModule> };
  const found = named.WebSocketServer === undefined ? named.default : named;
  if (found?.WebSocketServer === undefined || found.WebSocket === undefined) throw new TypeError('ws has no WebSocketServer');
  return found as WsModule;
}

/** Messages kept for a page that opens later, as `@statelyai/inspect/server` keeps them. */
const keptMessages = 200;
/** The largest message the bridge takes from a socket. */
const maxMessageBytes = 8 * 1024 * 1024;
const openState = 1;

/** Starts the bridge on 127.0.0.1:`port` and an inspector connected to it. */
export async function inspectLive(options: LiveInspectionOptions = {}): Promise<LiveInspection> {
  let inspect: InspectModule;
  let ws: WsModule;
  try {
    inspect = (await load('@statelyai/inspect')) as InspectModule;
  } catch (cause) {
    throw new MissingPeerError('@statelyai/inspect', cause);
  }
  try {
    // `@statelyai/inspect` brings `ws`; a strict installer (pnpm) links it only when the app lists it.
    ws = wsExports(await load('ws'));
  } catch (cause) {
    throw new MissingPeerError('ws', cause);
  }
  const host = options.host ?? '127.0.0.1';
  const requested = options.port ?? 8080;
  const inspectorUrl = new URL(options.inspectorUrl ?? 'https://stately.ai/inspect').href;
  const chartView = options.chartViewUrl === undefined ? undefined : new URL(options.chartViewUrl).href;

  const { createServer } = (await load('node:http')) as typeof import('node:http');
  const sockets = new ws.WebSocketServer({ noServer: true, maxPayload: maxMessageBytes });
  // Errors of one socket stay with that socket: nothing reaches the process as an unhandled 'error'.
  sockets.on('error', () => undefined);
  const kept: string[] = [];
  const server: Server = createServer((request, response) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { allow: 'GET' }).end();
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    response.end(bridgePage(inspectorUrl, chartView));
  });
  server.on('upgrade', (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy());
    sockets.handleUpgrade(request, socket, head, (client) => {
      client.on('error', () => {
        client.terminate();
      });
      for (const message of kept) client.send(message);
      client.on('message', (data) => {
        const message = data.toString();
        kept.push(message);
        if (kept.length > keptMessages) kept.shift();
        for (const other of sockets.clients) if (other !== client && other.readyState === openState) other.send(message);
      });
    });
  });
  server.on('clientError', (_error, socket) => socket.destroy());

  const port = await new Promise<number>((resolve, reject) => {
    const failed = (error: NodeJS.ErrnoException) => {
      sockets.close();
      reject(new InspectorPortError(requested, host, error.code ?? 'unknown', error));
    };
    server.once('error', failed);
    server.listen(requested, host, () => {
      server.off('error', failed);
      resolve((server.address() as AddressInfo).port);
    });
  });
  // After listening, a server error (rare: the handle failing) ends the bridge, not the process.
  server.on('error', () => {
    server.close();
  });

  // The Node side: @statelyai/inspect's own inspector turns inspection events into its format;
  // this adapter sends them over one WebSocket to the bridge, held until it opens (bounded).
  const target = `ws://${host.includes(':') ? `[${host}]` : host}:${port}`;
  let socket: InstanceType<WsModule['WebSocket']> | undefined;
  let open = false;
  let stopped = false;
  const waiting: string[] = [];
  const adapter: Adapter = {
    start() {
      socket = new ws.WebSocket(target);
      socket.onopen = () => {
        open = true;
        for (const message of waiting.splice(0)) socket?.send(message);
      };
      socket.onerror = () => {
        open = false;
      };
      socket.onclose = () => {
        open = false;
      };
    },
    stop() {
      socket?.close();
      open = false;
    },
    send(event) {
      if (stopped) return;
      const message = safeJson(event);
      if (message === undefined) return;
      if (open && socket?.readyState === openState) socket.send(message);
      else {
        waiting.push(message);
        if (waiting.length > keptMessages) waiting.shift();
      }
    },
  };
  const inspector = inspect.createInspector(adapter);
  inspector.start();

  const address = host.includes(':') ? `[${host}]` : host === '0.0.0.0' ? '127.0.0.1' : host;
  const url = `http://${address}:${port}/`;
  if (options.open === true) await openBrowser(url);
  return {
    inspect: inspector.inspect,
    url,
    port,
    stop() {
      if (stopped) return;
      stopped = true;
      inspector.stop();
      for (const client of sockets.clients) client.terminate();
      sockets.close();
      server.close();
      server.closeAllConnections();
    },
  };
}

/** JSON with cycles cut; undefined when the value cannot be written at all. */
function safeJson(value: unknown): string | undefined {
  const seen = new WeakSet();
  try {
    return JSON.stringify(value, (_key, item: unknown) => {
      if (typeof item === 'bigint') return item.toString();
      if (typeof item === 'object' && item !== null) {
        if (seen.has(item)) return '[circular]';
        seen.add(item);
      }
      return item;
    });
  } catch {
    return undefined;
  }
}

async function openBrowser(url: string): Promise<void> {
  const { execFile } = (await load('node:child_process')) as typeof import('node:child_process');
  const command = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  execFile(command, [url], () => undefined);
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

/** How long the page waits for the hosted inspector to say it is connected before it says it cannot be reached. */
export const inspectorWaitMs = 10_000;

/**
 * U10: the bridge page: the hosted inspector in an iframe, fed from the bridge's WebSocket; a
 * notice when the hosted inspector cannot be reached (the probe fails, or it does not say
 * '@statelyai.connected' in time), with the count of events that did arrive and the local
 * chart view's link.
 */
export function bridgePage(inspectorUrl: string, chartViewUrl: string | undefined): string {
  const view =
    chartViewUrl === undefined
      ? 'Run <code>mcp-xstate-transport &lt;url&gt; --view</code> for the local chart view.'
      : `Open the <a id="chart-view" href="${escapeHtml(chartViewUrl)}" target="_blank" rel="noopener">local chart view</a> (${escapeHtml(chartViewUrl)}).`;
  return `<!DOCTYPE html>
<html>
<head>
  <meta charset="utf-8">
  <title>Stately Inspector (mcp-xstate-transport)</title>
  <style>
    * { margin: 0; padding: 0; }
    html, body { height: 100%; font-family: system-ui, sans-serif; }
    body { display: flex; flex-direction: column; }
    iframe { flex: 1; width: 100%; border: none; }
    #unreachable { display: none; padding: 12px 16px; background: #fff4d6; color: #3b2f00; border-bottom: 1px solid #e0c060; line-height: 1.5; }
    #unreachable.shown { display: block; }
    code { background: #0001; padding: 0 3px; }
  </style>
</head>
<body>
  <div id="unreachable" role="alert">
    The hosted Stately inspector (<span>${escapeHtml(inspectorUrl)}</span>) cannot be reached from this browser
    (no internet, or it is blocked): <span id="received">0</span> inspection events have arrived over the bridge all the same.
    The local chart view needs no internet. ${view}
  </div>
  <iframe id="inspector" src="${escapeHtml(inspectorUrl)}" title="Stately inspector"></iframe>
  <script>
    const inspectorUrl = ${JSON.stringify(inspectorUrl)};
    const iframe = document.getElementById('inspector');
    const notice = document.getElementById('unreachable');
    const count = document.getElementById('received');
    const buffer = [];
    let connected = false;
    let received = 0;
    const unreachable = () => { if (!connected) notice.classList.add('shown'); };
    // A failed request (no-cors: any answer counts) means no network route to the hosted page.
    fetch(inspectorUrl, { mode: 'no-cors', cache: 'no-store' }).catch(unreachable);
    // A page that loads but never says it is connected is of no use either.
    setTimeout(unreachable, ${inspectorWaitMs});
    window.addEventListener('message', (e) => {
      if (e.source === iframe.contentWindow && e.data && e.data.type === '@statelyai.connected') {
        connected = true;
        notice.classList.remove('shown');
        for (const event of buffer) iframe.contentWindow.postMessage(event, '*');
        buffer.length = 0;
      }
    });
    const ws = new WebSocket('ws://' + location.host);
    ws.onmessage = (event) => {
      const data = JSON.parse(event.data);
      count.textContent = String(++received);
      if (connected) iframe.contentWindow.postMessage(data, '*');
      else if (buffer.push(data) > 200) buffer.shift();
    };
  </script>
</body>
</html>`;
}
