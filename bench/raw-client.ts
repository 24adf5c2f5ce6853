/**
 * The lower bound: a hand-written MCP Streamable HTTP client with no SDK and no statechart.
 * Plain fetch, headers built once per session, JSON.parse for JSON bodies, and eventsource-parser's
 * `createParser` fed from a `TextDecoder` for event streams. No validation beyond what it needs to
 * find its response. It does what a correct client must: initialize, notifications/initialized,
 * the standalone GET stream, calls (JSON or SSE answers, notifications on either stream), DELETE.
 */
import { createParser, type EventSourceMessage } from 'eventsource-parser';

const PROTOCOL_VERSION = '2025-11-25';

interface RpcError {
  code: number;
  message: string;
}

/** A JSON-RPC message as far as this client looks at it. */
export interface RpcMessage {
  jsonrpc: '2.0';
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: RpcError;
}

export type NotificationHandler = (message: RpcMessage) => void;

function parseMessage(text: string): RpcMessage | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as RpcMessage) : undefined;
  } catch {
    return undefined;
  }
}

export class RawClient {
  /** Notifications from any stream (progress on a POST stream, logging on the GET stream). */
  onNotification: NotificationHandler | undefined;
  sessionId: string | undefined;
  private nextId = 0;
  private postHeaders: Record<string, string> = {
    accept: 'application/json, text/event-stream',
    'content-type': 'application/json',
  };
  private sessionHeaders: Record<string, string> = {};
  private getController: AbortController | undefined;
  private getOpened: Promise<void> | undefined;
  /** Settles when the standalone GET stream has ended (or failed to open). */
  private getEnded: Promise<void> | undefined;

  constructor(private readonly url: string) {}

  /** initialize, then notifications/initialized; starts the standalone GET stream without waiting for it. */
  async connect(): Promise<void> {
    const init = await this.request('initialize', {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'bench-raw', version: '1.0.0' },
    });
    const version = init.result?.protocolVersion;
    const protocolVersion = typeof version === 'string' ? version : PROTOCOL_VERSION;
    if (this.sessionId === undefined) throw new Error('raw: server sent no session id');
    this.sessionHeaders = { 'mcp-session-id': this.sessionId, 'mcp-protocol-version': protocolVersion };
    this.postHeaders = { ...this.postHeaders, ...this.sessionHeaders };
    const response = await fetch(this.url, {
      method: 'POST',
      headers: this.postHeaders,
      body: '{"jsonrpc":"2.0","method":"notifications/initialized"}',
    });
    await response.body?.cancel();
    if (response.status !== 202) throw new Error(`raw: initialized answered HTTP ${response.status}`);
    let ended: () => void = () => undefined;
    this.getEnded = new Promise<void>((resolve) => {
      ended = resolve;
    });
    this.getOpened = this.openGet(ended);
    // Failures surface through ready(); an unawaited rejection must not end the process.
    this.getOpened.catch(ended);
  }

  /** Resolves once the standalone GET stream's response headers arrived. */
  ready(): Promise<void> {
    return this.getOpened ?? Promise.reject(new Error('raw: not connected'));
  }

  /** One JSON-RPC request as its own POST; resolves with its response. */
  async request(method: string, params: Record<string, unknown>): Promise<RpcMessage> {
    const id = ++this.nextId;
    const response = await fetch(this.url, {
      method: 'POST',
      headers: this.postHeaders,
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    if (!response.ok) {
      await response.body?.cancel();
      throw new Error(`raw: ${method} answered HTTP ${response.status}`);
    }
    if (this.sessionId === undefined) this.sessionId = response.headers.get('mcp-session-id') ?? undefined;
    const type = response.headers.get('content-type') ?? '';
    if (type.startsWith('text/event-stream') && response.body !== null) return this.readResponseStream(response.body, id);
    if (!type.startsWith('application/json')) throw new Error(`raw: ${method} answered ${type}`);
    const value: unknown = JSON.parse(await response.text());
    const messages = (Array.isArray(value) ? value : [value]) as RpcMessage[];
    let answer: RpcMessage | undefined;
    for (const message of messages) {
      if (message.id === id && message.method === undefined) answer = message;
      else this.onNotification?.(message);
    }
    if (answer === undefined) throw new Error(`raw: no response to ${method}`);
    return answer;
  }

  /**
   * DELETE the session. The server ends the standalone GET stream when it deletes the session, so
   * the stream is left to end by itself (its connection stays reusable); it is aborted only if it
   * is still open a second later.
   */
  async close(): Promise<void> {
    const controller = this.getController;
    this.getController = undefined;
    if (this.sessionId !== undefined) {
      const response = await fetch(this.url, { method: 'DELETE', headers: this.sessionHeaders });
      await response.body?.cancel();
      this.sessionId = undefined;
    }
    if (controller === undefined) return;
    const fallback = setTimeout(() => {
      controller.abort();
    }, 1_000);
    fallback.unref();
    const ended = this.getEnded ?? Promise.resolve();
    void ended.then(() => {
      clearTimeout(fallback);
    });
  }

  private async openGet(ended: () => void): Promise<void> {
    const controller = new AbortController();
    this.getController = controller;
    const response = await fetch(this.url, {
      method: 'GET',
      headers: { accept: 'text/event-stream', ...this.sessionHeaders },
      signal: controller.signal,
    });
    if (!response.ok || response.body === null) {
      await response.body?.cancel();
      throw new Error(`raw: GET stream answered HTTP ${response.status}`);
    }
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    const parser = createParser({
      onEvent: (event: EventSourceMessage) => {
        if (event.data === '') return;
        const message = parseMessage(event.data);
        if (message !== undefined) this.onNotification?.(message);
      },
    });
    const pump = async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        parser.feed(decoder.decode(value, { stream: true }));
      }
    };
    // Ends by the server (on DELETE) or by abort; either is fine here.
    pump().then(ended, ended);
  }

  /**
   * A POST answered with an event stream: notifications go to the handler, the response resolves
   * the call at once, and the rest of the body is drained in the background (the server ends the
   * stream right after the response, so the connection is kept for the next request).
   */
  private readResponseStream(body: ReadableStream<Uint8Array>, id: number): Promise<RpcMessage> {
    return new Promise((resolve, reject) => {
      const reader = body.getReader();
      const decoder = new TextDecoder();
      let answered = false;
      const parser = createParser({
        onEvent: (event: EventSourceMessage) => {
          if (event.data === '') return;
          const message = parseMessage(event.data);
          if (message === undefined) return;
          if (!answered && message.id === id && message.method === undefined) {
            answered = true;
            resolve(message);
          } else {
            this.onNotification?.(message);
          }
        },
      });
      const pump = async () => {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          parser.feed(decoder.decode(value, { stream: true }));
        }
        if (!answered) reject(new Error('raw: stream ended without a response'));
      };
      pump().catch((error: unknown) => {
        if (!answered) reject(error instanceof Error ? error : new Error(String(error)));
      });
    });
  }
}
