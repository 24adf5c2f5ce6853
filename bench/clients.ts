/**
 * The clients under test: `this` (this transport, the built Node entry, under the SDK `Client`: 1.x,
 * or 2.x in the modern era), `sdk` (the SDK's own transport under its `Client`: 1.x, or 2.x in the
 * modern era), `raw` (a plain fetch loop, bench/raw-client.ts) and `floor` (the 1.x `Client` over an
 * instant in-memory transport: no transport under that Client can go below it); the last two 2025 only.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as SdkTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { LoggingMessageNotificationSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { Client as ClientV2, StreamableHTTPClientTransport as SdkTransportV2, type McpSubscription } from '@modelcontextprotocol/client';
// The built package's Node entry (`npm run build`, which the bench scripts run first), as users run it: the
// TypeScript source under tsx would add its loader's overhead to every call. Typed from src/.
const builtPackage = '../dist/node/src/node.js';
const { StreamableHTTPClientTransport: ThisTransport } = (await import(builtPackage)) as typeof import('../src/node.js');
import { RawClient } from './raw-client.js';
type ThisOptions = import('../src/node.js').StreamableHTTPClientTransportOptions;

export const clientKinds = ['this', 'sdk', 'raw', 'floor'] as const;
export type ClientKind = (typeof clientKinds)[number];
/** json, sse: 2025-11-25 with sessions (1.x Client and server); modern: 2026-07-28 (2.x Client and server). */
export type Mode = 'json' | 'sse' | 'modern';

export const clientLabels: Record<ClientKind, string> = {
  this: 'this transport',
  sdk: 'SDK transport (1.x; 2.x in modern)',
  raw: 'raw fetch',
  floor: 'floor (Client, in-memory)',
};

/**
 * An instant in-memory server under the SDK `Client`: answers `initialize` and the bench tools
 * (`echo`, `progress` and `notify` with their notifications) in the next microtask, with no I/O,
 * parsing or validation of its own.
 */
class InstantTransport implements Transport {
  onmessage?: (message: JSONRPCMessage) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  sessionId = 'in-memory';

  start(): Promise<void> {
    return Promise.resolve();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (!('method' in message) || !('id' in message)) return Promise.resolve();
    const { id, method, params } = message;
    queueMicrotask(() => {
      const deliver = (m: JSONRPCMessage) => this.onmessage?.(m);
      if (method === 'initialize') {
        const result = {
          protocolVersion: '2025-11-25',
          capabilities: { tools: {}, logging: {} },
          serverInfo: { name: 'floor', version: '1' },
        };
        deliver({ jsonrpc: '2.0', id, result });
        return;
      }
      const args = (params?.arguments ?? {}) as { text?: string; steps?: number; count?: number };
      const token = (params?._meta as { progressToken?: string | number } | undefined)?.progressToken;
      const steps = params?.name === 'progress' && token !== undefined ? (args.steps ?? 0) : 0;
      for (let i = 1; i <= steps; i++) {
        deliver({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token ?? 0, progress: i, total: steps } });
      }
      const count = params?.name === 'notify' ? (args.count ?? 0) : 0;
      for (let i = 0; i < count; i++) deliver({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: { i } } });
      // The Client handles notifications a microtask late and responses at once: answer after them.
      queueMicrotask(() => {
        deliver({ jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: args.text ?? 'done' }] } });
      });
    });
    return Promise.resolve();
  }

  close(): Promise<void> {
    this.onclose?.();
    return Promise.resolve();
  }
}

export interface BenchClient {
  readonly sessionId: string | undefined;
  /** Connects (initialize + initialized, or server/discover in the modern era). */
  connect(): Promise<void>;
  /** A tools/call (`echo {text}`, `progress {steps}` with `onprogress`, `notify {count}`); resolves with its result. */
  call(name: string, args: Record<string, unknown>, onprogress?: () => void): Promise<unknown>;
  /** Modern era: opens a `subscriptions/listen` stream for tools/list_changed. */
  listen?(): Promise<void>;
  /** Told of each logging notification (GET stream), or list_changed (listen stream, modern). */
  onNote: (() => void) | undefined;
  /** Ends the session (with DELETE where there is one). */
  close(): Promise<void>;
  /** Errors reported through `onerror`. */
  readonly errors: Error[];
}

/** Calls `echo` and checks that the same text came back. */
export async function echo(client: BenchClient, text: string): Promise<void> {
  const result = (await client.call('echo', { text })) as { content?: { text?: unknown }[] } | undefined;
  const got = result?.content?.[0]?.text;
  if (got !== text)
    throw new Error(`echo returned ${typeof got === 'string' ? got.length : String(got)} characters, expected ${text.length}`);
}

/** The SDK `Client` (1.x, or 2.x in the modern era) over a transport. */
class SdkClientDriver implements BenchClient {
  onNote: (() => void) | undefined;
  readonly errors: Error[] = [];
  private readonly client: { v: 1; c: Client } | { v: 2; c: ClientV2 };
  private subscription: McpSubscription | undefined;

  constructor(
    private readonly transport: InstanceType<typeof ThisTransport> | SdkTransport | SdkTransportV2 | InstantTransport,
    modern: boolean,
  ) {
    const note = () => this.onNote?.();
    if (modern) {
      this.client = { v: 2, c: new ClientV2({ name: 'bench', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } }) };
      this.client.c.setNotificationHandler('notifications/tools/list_changed', note);
    } else {
      this.client = { v: 1, c: new Client({ name: 'bench', version: '1.0.0' }, { capabilities: {} }) };
      this.client.c.setNotificationHandler(LoggingMessageNotificationSchema, note);
    }
    this.client.c.onerror = (error: Error) => {
      if (this.errors.length < 100) this.errors.push(error);
    };
  }

  get sessionId(): string | undefined {
    return this.transport.sessionId;
  }

  async connect(): Promise<void> {
    await this.client.c.connect(this.transport);
  }

  call(name: string, args: Record<string, unknown>, onprogress?: () => void): Promise<unknown> {
    const options = onprogress === undefined ? undefined : { onprogress };
    const params = { name, arguments: args };
    return this.client.v === 2 ? this.client.c.callTool(params, options) : this.client.c.callTool(params, undefined, options);
  }

  async listen(): Promise<void> {
    if (this.client.v === 2) this.subscription ??= await this.client.c.listen({ toolsListChanged: true });
  }

  async close(): Promise<void> {
    await this.subscription?.close();
    // The 1.x SDK transport sends no DELETE on close; terminateSession() does.
    if (this.transport instanceof SdkTransport) await this.transport.terminateSession();
    await this.client.c.close();
  }
}

/** `options`: this transport's constructor options (the telemetry row). */
export function createClient(kind: ClientKind, url: string, mode: Mode, options: ThisOptions = {}): BenchClient {
  const modern = mode === 'modern';
  if (modern && (kind === 'raw' || kind === 'floor')) throw new Error(`${kind} has no modern-era client`);
  if (kind === 'raw') return new RawClient(url);
  const transport = { this: () => new ThisTransport(new URL(url), options), floor: () => new InstantTransport() }[kind as 'this' | 'floor'];
  return new SdkClientDriver(
    kind === 'sdk' ? (modern ? new SdkTransportV2(new URL(url)) : new SdkTransport(new URL(url))) : transport(),
    modern,
  );
}
