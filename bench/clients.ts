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
/** json, sse: 2025-11-25 with sessions (1.x Client and server); modern, modern-sse: 2026-07-28 (2.x Client and server; JSON or SSE answers). */
export type Mode = 'json' | 'sse' | 'modern' | 'modern-sse';
export const isModern = (mode: Mode): boolean => mode.startsWith('modern');
/** alone: the transport with no Client (`BareDriver`); v2: the 2.x Client in the 2025 era (versionNegotiation 'legacy'). */
export type Variant = 'alone' | 'v2' | undefined;
const envelope = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
/** The modern era's `_meta` envelope on a request's params (SEP-2243 headers are derived from it). */
export const withEnvelope = (params: Record<string, unknown>) => ({ ...params, _meta: { ...(params._meta ?? {}), ...envelope } });

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

type AnyTransport = InstanceType<typeof ThisTransport> | SdkTransport | SdkTransportV2 | InstantTransport;

/**
 * A transport with no `Client` (the transport-alone rows): initialize and initialized by hand in the
 * 2025 era (the transport then opens its GET stream); in the modern era `server/discover` and
 * `setProtocolVersion`, as the v2 Client connects, and the `_meta` envelope by hand;
 * a call waits for the response with its id; logging or list_changed notifications go to `onNote`.
 */
class BareDriver implements BenchClient {
  onNote: (() => void) | undefined;
  readonly errors: Error[] = [];
  private nextId = 0;
  private readonly pending = new Map<number, (message: JSONRPCMessage) => void>();
  private acked: (() => void) | undefined;

  constructor(
    private readonly transport: AnyTransport,
    private readonly modern: boolean,
  ) {
    transport.onmessage = (message: JSONRPCMessage) => {
      if ('id' in message && !('method' in message)) this.pending.get(message.id as number)?.(message);
      else if ('method' in message && (message.method === 'notifications/message' || message.method === 'notifications/tools/list_changed'))
        this.onNote?.();
      else if ('method' in message && message.method === 'notifications/subscriptions/acknowledged') this.acked?.();
    };
    transport.onerror = (error: Error) => {
      if (this.errors.length < 100) this.errors.push(error);
    };
  }

  get sessionId(): string | undefined {
    return this.transport.sessionId;
  }

  private request(method: string, params: Record<string, unknown>, wait = true): Promise<JSONRPCMessage> {
    const id = ++this.nextId;
    const answered = new Promise<JSONRPCMessage>((resolve) => this.pending.set(id, resolve));
    const sent = this.transport.send({ jsonrpc: '2.0', id, method, params: this.modern ? withEnvelope(params) : params });
    return wait ? sent.then(() => answered).finally(() => this.pending.delete(id)) : sent.then(() => answered);
  }

  async connect(): Promise<void> {
    await this.transport.start();
    if (this.modern) {
      // As the v2 Client connects in this era: the probe, then the version it settled on (E1).
      await this.request('server/discover', {});
      (this.transport as { setProtocolVersion?: (v: string) => void }).setProtocolVersion?.('2026-07-28');
      return;
    }
    const clientInfo = { name: 'bench-alone', version: '1.0.0' };
    await this.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo });
    (this.transport as { setProtocolVersion?: (v: string) => void }).setProtocolVersion?.('2025-11-25');
    await this.transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  }

  async call(name: string, args: Record<string, unknown>): Promise<unknown> {
    const answer = await this.request('tools/call', { name, arguments: args });
    return 'result' in answer ? answer.result : undefined;
  }

  /** Sends subscriptions/listen and waits (bounded) for its acknowledgement; its stream carries the notifications. */
  async listen(): Promise<void> {
    const acked = new Promise<void>((resolve, reject) => {
      this.acked = resolve;
      setTimeout(() => {
        reject(new Error('alone: subscriptions/listen not acknowledged in 5 s'));
      }, 5_000).unref();
    });
    void this.request('subscriptions/listen', { notifications: { toolsListChanged: true } }, false).catch(() => undefined);
    await acked;
  }

  async close(): Promise<void> {
    if (this.transport instanceof SdkTransport) await this.transport.terminateSession();
    await this.transport.close();
  }
}

/** The SDK `Client` (1.x, or 2.x in the modern era) over a transport. */
class SdkClientDriver implements BenchClient {
  onNote: (() => void) | undefined;
  readonly errors: Error[] = [];
  private readonly client: { v: 1; c: Client } | { v: 2; c: ClientV2 };
  private subscription: McpSubscription | undefined;

  constructor(
    private readonly transport: AnyTransport,
    private readonly modern: boolean,
    v2: boolean,
  ) {
    const note = () => this.onNote?.();
    if (modern || v2) {
      const mode = modern ? 'auto' : 'legacy';
      this.client = { v: 2, c: new ClientV2({ name: 'bench', version: '1.0.0' }, { versionNegotiation: { mode } }) };
      this.client.c.setNotificationHandler(modern ? 'notifications/tools/list_changed' : 'notifications/message', note);
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
    // The SDK transports send no DELETE on close; terminateSession() does (2025 era).
    if (this.transport instanceof SdkTransport || (this.transport instanceof SdkTransportV2 && !this.modern))
      await this.transport.terminateSession();
    await this.client.c.close();
  }
}

/** `options`: this transport's constructor options (the telemetry and S8 rows). */
export function createClient(kind: ClientKind, url: string, mode: Mode, options: ThisOptions = {}, variant?: Variant): BenchClient {
  const modern = isModern(mode);
  if ((modern || variant !== undefined) && kind === 'floor') throw new Error('floor: 1.x Client in the 2025 era only');
  if (kind === 'raw') return new RawClient(url, modern, variant === 'alone');
  const v2 = modern || variant === 'v2';
  const transport = { this: () => new ThisTransport(new URL(url), options), floor: () => new InstantTransport() }[kind as 'this' | 'floor'];
  const made = kind === 'sdk' ? (v2 ? new SdkTransportV2(new URL(url)) : new SdkTransport(new URL(url))) : transport();
  return variant === 'alone' ? new BareDriver(made, modern) : new SdkClientDriver(made, modern, variant === 'v2');
}
