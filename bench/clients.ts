/**
 * The clients under test, behind one small interface:
 *   this   this project's StreamableHTTPClientTransport with the SDK `Client` (the Node entry, as
 *          Node users get it: requests through node:http)
 *   sdk    the SDK's own StreamableHTTPClientTransport with the SDK `Client`
 *   raw    a plain fetch loop (bench/raw-client.ts)
 *   floor  the SDK `Client` over an instant in-memory transport: no transport under that Client
 *          can go below it
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as SdkTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { LoggingMessageNotificationSchema, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
// The built package's Node entry (`npm run build`, which the bench scripts run first), as users run it: the
// TypeScript source under tsx would add its loader's overhead to every call. Typed from src/.
const builtPackage = '../dist/node/src/node.js';
const { StreamableHTTPClientTransport: ThisTransport } = (await import(builtPackage)) as typeof import('../src/node.js');
import { RawClient, type RpcMessage } from './raw-client.js';

export const clientKinds = ['this', 'sdk', 'raw', 'floor'] as const;
export type ClientKind = (typeof clientKinds)[number];

export const clientLabels: Record<ClientKind, string> = {
  this: 'this transport',
  sdk: 'SDK transport',
  raw: 'raw fetch',
  floor: 'floor (Client, in-memory)',
};

/**
 * An instant in-memory server under the SDK `Client`: answers `initialize` and the bench tools
 * (`echo`, `progress` with its notifications, `notify` with its logging notifications) in the
 * next microtask, with no I/O, parsing or validation of its own.
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
        deliver({
          jsonrpc: '2.0',
          id,
          result: { protocolVersion: '2025-11-25', capabilities: { tools: {}, logging: {} }, serverInfo: { name: 'floor', version: '1' } },
        });
        return;
      }
      const args = (params?.arguments ?? {}) as { text?: string; steps?: number; count?: number; tag?: string };
      const token = (params?._meta as { progressToken?: string | number } | undefined)?.progressToken;
      if (params?.name === 'progress' && token !== undefined) {
        for (let i = 1; i <= (args.steps ?? 0); i++) {
          deliver({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: token, progress: i, total: args.steps } });
        }
      } else if (params?.name === 'notify') {
        for (let i = 0; i < (args.count ?? 0); i++) {
          deliver({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: { tag: args.tag, i } } });
        }
      }
      const response: JSONRPCMessage = { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text: args.text ?? 'done' }] } };
      // The Client handles notifications a microtask late and responses at once: answer after them.
      queueMicrotask(() => {
        deliver(response);
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
  /** initialize + initialized; the standalone GET stream is started (not awaited). */
  connect(): Promise<void>;
  /** Calls `echo`; resolves with the length of the text that came back. */
  echo(text: string): Promise<number>;
  /** Calls `progress`; `onProgress` runs once per progress notification. */
  progress(steps: number, onProgress: () => void): Promise<void>;
  /** Calls `notify`: `count` logging notifications tagged `tag` on the standalone GET stream. */
  notify(count: number, tag: string): Promise<void>;
  /** Told the tag of each logging notification received. */
  onLog: ((tag: string) => void) | undefined;
  /** Ends the session, with DELETE. */
  close(): Promise<void>;
  /** Errors reported through `onerror` (or swallowed by the raw client's streams). */
  readonly errors: Error[];
}

function tagOf(data: unknown): string | undefined {
  if (typeof data === 'object' && data !== null && 'tag' in data && typeof data.tag === 'string') return data.tag;
  return undefined;
}

function textLength(result: unknown): number {
  if (typeof result !== 'object' || result === null || !('content' in result) || !Array.isArray(result.content)) return -1;
  const first: unknown = result.content[0];
  if (typeof first === 'object' && first !== null && 'text' in first && typeof first.text === 'string') return first.text.length;
  return -1;
}

/** The SDK `Client` over either transport. */
class SdkClientDriver implements BenchClient {
  onLog: ((tag: string) => void) | undefined;
  readonly errors: Error[] = [];
  private readonly client = new Client({ name: 'bench', version: '1.0.0' }, { capabilities: {} });

  constructor(
    private readonly transport: InstanceType<typeof ThisTransport> | SdkTransport | InstantTransport,
    /** The SDK transport sends no DELETE on close; terminateSession() does. */
    private readonly terminateFirst: boolean,
  ) {
    this.client.onerror = (error) => {
      if (this.errors.length < 100) this.errors.push(error);
    };
    this.client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      const tag = tagOf(notification.params.data);
      if (tag !== undefined) this.onLog?.(tag);
    });
  }

  get sessionId(): string | undefined {
    return this.transport.sessionId;
  }

  async connect(): Promise<void> {
    await this.client.connect(this.transport);
  }

  async echo(text: string): Promise<number> {
    return textLength(await this.client.callTool({ name: 'echo', arguments: { text } }));
  }

  async progress(steps: number, onProgress: () => void): Promise<void> {
    await this.client.callTool({ name: 'progress', arguments: { steps } }, undefined, { onprogress: onProgress });
  }

  async notify(count: number, tag: string): Promise<void> {
    await this.client.callTool({ name: 'notify', arguments: { count, tag } });
  }

  async close(): Promise<void> {
    if (this.terminateFirst && this.transport instanceof SdkTransport) await this.transport.terminateSession();
    await this.client.close();
  }
}

class RawClientDriver implements BenchClient {
  onLog: ((tag: string) => void) | undefined;
  readonly errors: Error[] = [];
  private readonly raw: RawClient;
  private onProgress: (() => void) | undefined;
  private nextToken = 0;

  constructor(url: string) {
    this.raw = new RawClient(url);
    this.raw.onNotification = (message: RpcMessage) => {
      if (message.method === 'notifications/progress') this.onProgress?.();
      else if (message.method === 'notifications/message') {
        const tag = tagOf(message.params?.data);
        if (tag !== undefined) this.onLog?.(tag);
      }
    };
  }

  get sessionId(): string | undefined {
    return this.raw.sessionId;
  }

  connect(): Promise<void> {
    return this.raw.connect();
  }

  async echo(text: string): Promise<number> {
    const response = await this.raw.request('tools/call', { name: 'echo', arguments: { text } });
    if (response.error) throw new Error(`raw echo: ${response.error.message}`);
    return textLength(response.result);
  }

  async progress(steps: number, onProgress: () => void): Promise<void> {
    this.onProgress = onProgress;
    try {
      const response = await this.raw.request('tools/call', {
        name: 'progress',
        arguments: { steps },
        _meta: { progressToken: ++this.nextToken },
      });
      if (response.error) throw new Error(`raw progress: ${response.error.message}`);
    } finally {
      this.onProgress = undefined;
    }
  }

  async notify(count: number, tag: string): Promise<void> {
    const response = await this.raw.request('tools/call', { name: 'notify', arguments: { count, tag } });
    if (response.error) throw new Error(`raw notify: ${response.error.message}`);
  }

  close(): Promise<void> {
    return this.raw.close();
  }
}

export function createClient(kind: ClientKind, url: string): BenchClient {
  switch (kind) {
    case 'this':
      return new SdkClientDriver(new ThisTransport(new URL(url)), false);
    case 'sdk':
      return new SdkClientDriver(new SdkTransport(new URL(url)), true);
    case 'raw':
      return new RawClientDriver(url);
    case 'floor':
      return new SdkClientDriver(new InstantTransport(), false);
  }
}
