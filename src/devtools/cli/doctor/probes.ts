/** N4: the doctor's plain HTTP probes (no transport in between, redirects not followed) and what the era probes send. */
import { createParser } from 'eventsource-parser';
import type { DoctorOptions } from '../args.js';
import { isRecord } from '../../../record.js';
import { FIRST_MODERN_VERSION, PROTOCOL_VERSION_META_KEY } from '../../../../machines/connection/messages.js';

export const streamableVersion = '2025-11-25';
export const clientInfo = { name: 'mcp-xstate-transport-doctor', version: '1' };
export const envelope = {
  [PROTOCOL_VERSION_META_KEY]: FIRST_MODERN_VERSION,
  'io.modelcontextprotocol/clientInfo': clientInfo,
  'io.modelcontextprotocol/clientCapabilities': {},
};

export type Json = Record<string, unknown>;

/** A probe's answer: status, headers, and the JSON-RPC message it carried (JSON or the first SSE answer). */
export interface Answer {
  status: number;
  headers: Headers;
  message: Json | undefined;
}

export const isRedirect = (status: number) => status >= 300 && status < 400 && status !== 304;

export class Probes {
  private nextId = 1;
  constructor(private readonly options: DoctorOptions) {}

  private headers(extra: Record<string, string>): Headers {
    const headers = new Headers(this.options.headers);
    for (const [name, value] of Object.entries(extra)) headers.set(name, value);
    return headers;
  }

  /** One request, redirects not followed; `stream`: its body is watched, so the watch window is added to the timeout. */
  fetch(url: URL, init: RequestInit & { headers?: Record<string, string> }, stream = false): Promise<Response> {
    return fetch(url, {
      ...init,
      headers: this.headers(init.headers ?? {}),
      redirect: 'manual',
      signal: AbortSignal.timeout(this.options.timeoutMs + (stream ? this.options.keepAliveWindowMs : 0)),
    });
  }

  /** POSTs one JSON-RPC message; reads the answer to it from a JSON body or an event stream. */
  async post(url: URL, method: string, params: Json, headers: Record<string, string> = {}, notification = false): Promise<Answer> {
    const id = this.nextId++;
    const body = notification ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', id, method, params };
    const response = await this.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    });
    const type = response.headers.get('content-type') ?? '';
    let message: Json | undefined;
    if (type.includes('text/event-stream') && response.body !== null) {
      message = await firstAnswer(response.body, id);
    } else {
      const text = await response.text();
      try {
        const parsed: unknown = JSON.parse(text);
        message = isRecord(parsed) ? parsed : undefined;
      } catch {
        message = undefined;
      }
    }
    return { status: response.status, headers: response.headers, message };
  }
}

/** The first JSON-RPC answer to `id` on an event stream; the stream is cancelled after it. */
async function firstAnswer(body: ReadableStream<Uint8Array>, id: number): Promise<Json | undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let found: Json | undefined;
  const parser = createParser({
    onEvent: (event) => {
      try {
        const data: unknown = JSON.parse(event.data);
        if (found === undefined && isRecord(data) && data.id === id) found = data;
      } catch {
        // not JSON: a priming event or a comment-like payload
      }
    },
  });
  try {
    for (let chunks = 0; found === undefined && chunks < 10_000; chunks++) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return found;
}

export function sessionHeaders(sessionId: string | undefined, version: string): Record<string, string> {
  return { 'mcp-protocol-version': version, ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }) };
}
