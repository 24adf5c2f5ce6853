/**
 * The clients under test, behind one small interface:
 *   this   this project's StreamableHTTPClientTransport (the built Node entry, as Node users get
 *          it: requests through node:http) under the SDK `Client`: 1.x, or 2.x in the modern era
 *   sdk    the SDK's own StreamableHTTPClientTransport under its `Client`: 1.x, or 2.x (both
 *          from @modelcontextprotocol/client) in the modern era
 *   raw    a plain fetch loop (bench/raw-client.ts); 2025-11-25 only
 *   floor  the SDK 1.x `Client` over an instant in-memory transport: no transport under that
 *          Client can go below it; 2025-11-25 only
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
import { RawClient, type RpcMessage } from './raw-client.js';

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
  /** Calls `echo`; resolves with the length of the text that came back. */
  echo(text: string): Promise<number>;
  /** Calls `progress`; `onProgress` runs once per progress notification. */
  progress(steps: number, onProgress: () => void): Promise<void>;
  /** Modern era: opens a `subscriptions/listen` stream for tools/list_changed. */
  listen(): Promise<void>;
  /** Calls `notify`: `count` logging notifications on the GET stream (list_changed on the listen stream, modern). */
  notify(count: number): Promise<void>;
  /** Told of each logging (or list_changed) notification received. */
  onNote: (() => void) | undefined;
  /** Ends the session (with DELETE where there is one). */
  close(): Promise<void>;
  /** Errors reported through `onerror` (or swallowed by the raw client's streams). */
  readonly errors: Error[];
}

function textLength(result: unknown): number {
  if (typeof result !== 'object' || result === null || !('content' in result) || !Array.isArray(result.content)) return -1;
  const first: unknown = result.content[0];
  if (typeof first === 'object' && first !== null && 'text' in first && typeof first.text === 'string') return first.text.length;
  return -1;
}

type AnyTransport = InstanceType<typeof ThisTransport> | SdkTransport | SdkTransportV2 | InstantTransport;

/** The SDK `Client` (1.x, or 2.x in the modern era) over a transport. */
class SdkClientDriver implements BenchClient {
  onNote: (() => void) | undefined;
  readonly errors: Error[] = [];
  private readonly v1: Client | undefined;
  private readonly v2: ClientV2 | undefined;
  private subscription: McpSubscription | undefined;

  constructor(
    private readonly transport: AnyTransport,
    modern: boolean,
  ) {
    const onerror = (error: Error) => {
      if (this.errors.length < 100) this.errors.push(error);
    };
    const note = () => this.onNote?.();
    if (modern) {
      this.v2 = new ClientV2({ name: 'bench', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
      this.v2.onerror = onerror;
      this.v2.setNotificationHandler('notifications/tools/list_changed', note);
    } else {
      this.v1 = new Client({ name: 'bench', version: '1.0.0' }, { capabilities: {} });
      this.v1.onerror = onerror;
      this.v1.setNotificationHandler(LoggingMessageNotificationSchema, note);
    }
  }

  get sessionId(): string | undefined {
    return this.transport.sessionId;
  }

  async connect(): Promise<void> {
    await (this.v2 ?? this.v1)?.connect(this.transport);
  }

  private call(name: string, args: Record<string, unknown>, onprogress?: () => void): Promise<unknown> {
    const params = { name, arguments: args };
    if (this.v2 !== undefined) return this.v2.callTool(params, onprogress === undefined ? undefined : { onprogress });
    if (this.v1 === undefined) throw new Error('no client');
    return this.v1.callTool(params, undefined, onprogress === undefined ? undefined : { onprogress });
  }

  async echo(text: string): Promise<number> {
    return textLength(await this.call('echo', { text }));
  }

  async progress(steps: number, onProgress: () => void): Promise<void> {
    await this.call('progress', { steps }, onProgress);
  }

  async listen(): Promise<void> {
    this.subscription ??= await this.v2?.listen({ toolsListChanged: true });
  }

  async notify(count: number): Promise<void> {
    await this.call('notify', { count });
  }

  async close(): Promise<void> {
    await this.subscription?.close();
    // The 1.x SDK transport sends no DELETE on close; terminateSession() does.
    if (this.transport instanceof SdkTransport) await this.transport.terminateSession();
    await (this.v2 ?? this.v1)?.close();
  }
}

class RawClientDriver implements BenchClient {
  onNote: (() => void) | undefined;
  readonly errors: Error[] = [];
  private readonly raw: RawClient;
  private onProgress: (() => void) | undefined;
  private nextToken = 0;

  constructor(url: string) {
    this.raw = new RawClient(url);
    this.raw.onNotification = (message: RpcMessage) => {
      if (message.method === 'notifications/progress') this.onProgress?.();
      else if (message.method === 'notifications/message') this.onNote?.();
    };
  }

  get sessionId(): string | undefined {
    return this.raw.sessionId;
  }

  connect(): Promise<void> {
    return this.raw.connect();
  }

  private async call(name: string, args: Record<string, unknown>, meta?: Record<string, unknown>): Promise<RpcMessage> {
    const response = await this.raw.request('tools/call', { name, arguments: args, ...(meta && { _meta: meta }) });
    if (response.error) throw new Error(`raw ${name}: ${response.error.message}`);
    return response;
  }

  async echo(text: string): Promise<number> {
    return textLength((await this.call('echo', { text })).result);
  }

  async progress(steps: number, onProgress: () => void): Promise<void> {
    this.onProgress = onProgress;
    await this.call('progress', { steps }, { progressToken: ++this.nextToken }).finally(() => {
      this.onProgress = undefined;
    });
  }

  listen(): Promise<void> {
    return Promise.resolve();
  }

  async notify(count: number): Promise<void> {
    await this.call('notify', { count });
  }

  close(): Promise<void> {
    return this.raw.close();
  }
}

export function createClient(kind: ClientKind, url: string, mode: Mode): BenchClient {
  const modern = mode === 'modern';
  if (modern && (kind === 'raw' || kind === 'floor')) throw new Error(`${kind} has no modern-era client`);
  switch (kind) {
    case 'this':
      return new SdkClientDriver(new ThisTransport(new URL(url)), modern);
    case 'sdk':
      return new SdkClientDriver(modern ? new SdkTransportV2(new URL(url)) : new SdkTransport(new URL(url)), modern);
    case 'raw':
      return new RawClientDriver(url);
    case 'floor':
      return new SdkClientDriver(new InstantTransport(), false);
  }
}
