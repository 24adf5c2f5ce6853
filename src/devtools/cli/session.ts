/**
 * A small MCP client over the transport, enough for the CLI: initialize, list, call, and answer
 * the server's pings. The CLI does not need the SDK (an optional peer of this package).
 */
import type { JSONRPCMessage, JSONRPCNotification } from '../../../machines/types.js';
import type { StreamableHTTPClientTransport } from '../../transport.js';
import { FIRST_MODERN_VERSION, PROTOCOL_VERSION_META_KEY } from '../../../machines/connection/messages.js';

/** The protocol revision the CLI asks for; the server may answer with an older one it supports. */
export const requestedProtocolVersion = '2025-11-25';
const clientInfo = { name: 'mcp-xstate-transport-cli', version: '1' };

/** What connecting found: the era, and the server's description (InitializeResult or DiscoverResult). */
export interface Connected {
  era: 'modern' | 'legacy';
  result: Record<string, unknown>;
  serverInfo: Record<string, unknown>;
}

/** A JSON-RPC error the server answered a request with. */
export class RpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    message: string,
    readonly data: unknown,
  ) {
    super(`${method}: ${message} (JSON-RPC error ${code})`);
    this.name = 'RpcError';
  }
}

interface Pending {
  method: string;
  resolve: (result: Record<string, unknown>) => void;
  reject: (error: Error) => void;
}

export class CliSession {
  private nextId = 1;
  /** E3: in the 2026-07-28 era every request carries the `_meta` envelope its headers come from. */
  private envelope: Record<string, unknown> | undefined;
  private readonly pending = new Map<number, Pending>();

  constructor(
    private readonly transport: StreamableHTTPClientTransport,
    onNotification: (notification: JSONRPCNotification) => void,
  ) {
    transport.onmessage = (message) => {
      this.receive(message, onNotification);
    };
    transport.onclose = () => {
      for (const [id, pending] of this.pending) {
        this.pending.delete(id);
        pending.reject(new Error(`${pending.method}: the transport closed before the answer`));
      }
    };
  }

  private receive(message: JSONRPCMessage, onNotification: (notification: JSONRPCNotification) => void): void {
    if ('method' in message) {
      if ('id' in message) {
        // The server asks us something: a ping gets its empty answer; nothing else is offered.
        const answer: JSONRPCMessage =
          message.method === 'ping'
            ? { jsonrpc: '2.0', id: message.id, result: {} }
            : { jsonrpc: '2.0', id: message.id, error: { code: -32601, message: `the CLI does not handle ${message.method}` } };
        this.transport.send(answer).catch(() => undefined);
        return;
      }
      onNotification(message);
      return;
    }
    if (typeof message.id !== 'number') return;
    const pending = this.pending.get(message.id);
    if (pending === undefined) return;
    this.pending.delete(message.id);
    if ('error' in message) pending.reject(new RpcError(pending.method, message.error.code, message.error.message, message.error.data));
    else pending.resolve(message.result);
  }

  request(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { method, resolve, reject });
      // The caller's `_meta` (a progress token, N5) and the era's envelope travel together.
      const own = typeof params._meta === 'object' && params._meta !== null ? params._meta : {};
      const sent = this.envelope === undefined ? params : { ...params, _meta: { ...own, ...this.envelope } };
      this.transport.send({ jsonrpc: '2.0', id, method, params: sent }).catch((error: unknown) => {
        this.pending.delete(id);
        reject(error instanceof Error ? error : new Error(String(error)));
      });
    });
  }

  /**
   * E1: probe for the 2026-07-28 era with `server/discover`; a server that offers it is spoken to
   * sessionless, any other answer (a JSON-RPC error, a 4xx) falls back to `initialize`.
   */
  async connect(): Promise<Connected> {
    await this.transport.start();
    this.envelope = {
      [PROTOCOL_VERSION_META_KEY]: FIRST_MODERN_VERSION,
      'io.modelcontextprotocol/clientInfo': clientInfo,
      'io.modelcontextprotocol/clientCapabilities': {},
    };
    let discover: Record<string, unknown> | undefined;
    try {
      discover = await this.request('server/discover');
    } catch (error) {
      if (!(error instanceof RpcError)) throw error;
    }
    const versions = discover?.supportedVersions;
    if (discover !== undefined && Array.isArray(versions) && versions.includes(FIRST_MODERN_VERSION)) {
      this.transport.setProtocolVersion(FIRST_MODERN_VERSION);
      const meta = discover._meta;
      const info =
        typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>)['io.modelcontextprotocol/serverInfo'] : undefined;
      return {
        era: 'modern',
        result: discover,
        serverInfo: typeof info === 'object' && info !== null ? (info as Record<string, unknown>) : {},
      };
    }
    this.envelope = undefined;
    const result = await this.initialize(false);
    const info = result.serverInfo;
    return { era: 'legacy', result, serverInfo: typeof info === 'object' && info !== null ? (info as Record<string, unknown>) : {} };
  }

  /** initialize, then notifications/initialized: the session is ready for calls. */
  async initialize(start = true): Promise<Record<string, unknown>> {
    if (start) await this.transport.start();
    const result = await this.request('initialize', {
      protocolVersion: requestedProtocolVersion,
      capabilities: {},
      clientInfo: { name: 'mcp-xstate-transport-cli', version: '1' },
    });
    if (typeof result.protocolVersion === 'string') this.transport.setProtocolVersion(result.protocolVersion);
    await this.transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return result;
  }

  /** Every page of a list method (`tools/list` → `tools`). */
  async list(method: string, key: string): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const result = await this.request(method, cursor === undefined ? {} : { cursor });
      const pageItems = result[key];
      if (Array.isArray(pageItems)) items.push(...(pageItems as Record<string, unknown>[]));
      cursor = typeof result.nextCursor === 'string' ? result.nextCursor : undefined;
      if (cursor === undefined) break;
    }
    return items;
  }
}
