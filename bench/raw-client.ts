/**
 * The lower bound: a hand-written MCP Streamable HTTP client (2025-11-25) with no SDK and no
 * statechart. Plain fetch, headers built once per session, JSON.parse for JSON bodies, and
 * eventsource-parser's `createParser` fed from a `TextDecoder` for event streams. No validation
 * beyond what it needs to find its response. It does what a correct client must: initialize,
 * notifications/initialized, the standalone GET stream, calls (JSON or SSE answers, notifications
 * on either stream), DELETE. Modern era (2026-07-28, `modern`): no session; each request carries the
 * `_meta` envelope and the SEP-2243 headers (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`) by
 * hand; list_changed arrives on a `subscriptions/listen` stream.
 */
import { createParser } from 'eventsource-parser';
import { withEnvelope, type BenchClient } from './clients.js';

/** A JSON-RPC message as far as this client looks at it. */
export interface RpcMessage {
  jsonrpc: '2.0';
  id?: string | number | null;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

/** Feeds an event stream's messages to `onMessage` until it ends (resolves) or fails (rejects). */
async function readEvents(body: ReadableStream<Uint8Array>, onMessage: (message: RpcMessage) => void): Promise<void> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const parser = createParser({
    onEvent: (event) => {
      if (event.data !== '') onMessage(JSON.parse(event.data) as RpcMessage);
    },
  });
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    parser.feed(decoder.decode(value, { stream: true }));
  }
}

export class RawClient implements BenchClient {
  onNote: (() => void) | undefined;
  readonly errors: Error[] = [];
  sessionId: string | undefined;
  private onProgress: (() => void) | undefined;
  private nextId = 0;
  private headers: Record<string, string> = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
  private sessionHeaders: Record<string, string> = {};
  private getController: AbortController | undefined;

  constructor(
    private readonly url: string,
    private readonly modern = false,
    /** An SSE answer read to its end, then each `data:` line `JSON.parse`d (S8's floor: no event parser). */
    private readonly whole = false,
  ) {
    if (modern) this.headers['mcp-protocol-version'] = '2026-07-28';
  }

  /** initialize, then notifications/initialized; starts the standalone GET stream without waiting for it (modern: nothing). */
  async connect(): Promise<void> {
    if (this.modern) return;
    const clientInfo = { name: 'bench-raw', version: '1.0.0' };
    const init = await this.request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo });
    const version = init.result?.protocolVersion;
    if (this.sessionId === undefined) throw new Error('raw: server sent no session id');
    this.sessionHeaders = {
      'mcp-session-id': this.sessionId,
      'mcp-protocol-version': typeof version === 'string' ? version : '2025-11-25',
    };
    this.headers = { ...this.headers, ...this.sessionHeaders };
    const body = '{"jsonrpc":"2.0","method":"notifications/initialized"}';
    const response = await fetch(this.url, { method: 'POST', headers: this.headers, body });
    await response.body?.cancel();
    if (response.status !== 202) throw new Error(`raw: initialized answered HTTP ${response.status}`);
    const controller = (this.getController = new AbortController());
    const opened = fetch(this.url, { headers: { accept: 'text/event-stream', ...this.sessionHeaders }, signal: controller.signal });
    const take = (message: RpcMessage) => {
      this.onNotification(message);
    };
    // Ends by the server (on DELETE) or by abort; either is fine here.
    opened.then((r) => (r.ok && r.body !== null ? readEvents(r.body, take) : undefined)).catch(() => undefined);
  }

  /** Progress on a POST stream, logging notifications on the GET stream. */
  private onNotification(message: RpcMessage): void {
    if (message.method === 'notifications/progress') this.onProgress?.();
    else if (message.method === 'notifications/message' || message.method === 'notifications/tools/list_changed') this.onNote?.();
  }

  /** Modern: a `subscriptions/listen` stream read in the background; resolves on its acknowledgement. */
  async listen(): Promise<void> {
    const controller = (this.getController = new AbortController());
    const params = withEnvelope({ notifications: { toolsListChanged: true } });
    const body = JSON.stringify({ jsonrpc: '2.0', id: ++this.nextId, method: 'subscriptions/listen', params });
    const headers = { ...this.headers, 'mcp-method': 'subscriptions/listen' };
    const response = await fetch(this.url, { method: 'POST', headers, body, signal: controller.signal });
    if (response.body === null) throw new Error(`raw: listen answered HTTP ${response.status} without a body`);
    await new Promise<void>((resolve, reject) => {
      const take = (m: RpcMessage) => {
        if (m.method === 'notifications/subscriptions/acknowledged') resolve();
        else this.onNotification(m);
      };
      const ended = () => {
        reject(new Error('raw: listen stream ended'));
      };
      readEvents(response.body as ReadableStream<Uint8Array>, take).then(ended, reject);
    });
  }

  async call(name: string, args: Record<string, unknown>, onprogress?: () => void): Promise<unknown> {
    this.onProgress = onprogress;
    const meta = onprogress === undefined ? {} : { _meta: { progressToken: ++this.nextId } };
    const response = await this.request('tools/call', { name, arguments: args, ...meta }).finally(() => {
      this.onProgress = undefined;
    });
    if (response.error) throw new Error(`raw ${name}: ${response.error.message}`);
    return response.result;
  }

  /** One JSON-RPC request as its own POST; resolves with its response. */
  async request(method: string, params: Record<string, unknown>): Promise<RpcMessage> {
    const id = ++this.nextId;
    const name = typeof params.name === 'string' ? params.name : undefined;
    const response = await fetch(this.url, {
      method: 'POST',
      headers: this.modern ? { ...this.headers, 'mcp-method': method, ...(name === undefined ? {} : { 'mcp-name': name }) } : this.headers,
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params: this.modern ? withEnvelope(params) : params }),
    });
    if (!response.ok) {
      await response.body?.cancel();
      throw new Error(`raw: ${method} answered HTTP ${response.status}`);
    }
    this.sessionId ??= response.headers.get('mcp-session-id') ?? undefined;
    const type = response.headers.get('content-type') ?? '';
    let answer: RpcMessage | undefined;
    const take = (message: RpcMessage) => {
      if (answer === undefined && message.id === id && message.method === undefined) answer = message;
      else this.onNotification(message);
    };
    // A POST's event stream: its response resolves the call at once; the rest is drained in the background.
    const body = response.body;
    if (type.startsWith('text/event-stream') && this.whole) {
      for (const line of (await response.text()).split('\n')) if (line.startsWith('data: ')) take(JSON.parse(line.slice(6)) as RpcMessage);
    } else if (type.startsWith('text/event-stream') && body !== null) {
      await new Promise<void>((resolve, reject) => {
        const ended = () => {
          if (answer === undefined) reject(new Error(`raw: no response to ${method}`));
          else resolve();
        };
        readEvents(body, (message) => {
          take(message);
          if (answer !== undefined) resolve();
        }).then(ended, reject);
      });
    } else if (type.startsWith('application/json')) [JSON.parse(await response.text()) as RpcMessage | RpcMessage[]].flat().forEach(take);
    else throw new Error(`raw: ${method} answered ${type}`);
    if (answer === undefined) throw new Error(`raw: no response to ${method}`);
    return answer;
  }

  /** DELETE the session; the server then ends the GET stream, which is aborted only if still open a second later (modern: abort the listen stream). */
  async close(): Promise<void> {
    if (this.modern) {
      this.getController?.abort();
      return;
    }
    const controller = this.getController;
    if (this.sessionId !== undefined) {
      const response = await fetch(this.url, { method: 'DELETE', headers: this.sessionHeaders });
      await response.body?.cancel();
      this.sessionId = undefined;
    }
    setTimeout(() => {
      controller?.abort();
    }, 1_000).unref();
  }
}
