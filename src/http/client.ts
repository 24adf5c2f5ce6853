import { TransportClosedError } from '../../machines/errors.js';
import type { BaseHeaders } from './headers.js';

export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** The part of the SDK's `OAuthClientProvider` this module reads: the current tokens. */
export interface TokenSource {
  tokens(): { access_token: string; token_type?: string } | undefined | Promise<{ access_token: string; token_type?: string } | undefined>;
}

export interface HttpConfig {
  url: URL;
  fetch: FetchLike;
  /** The caller's `requestInit`, without headers and signal (those are the transport's). */
  init: RequestInit;
  headers: BaseHeaders;
  tokens: TokenSource | undefined;
}

/** A response whose body may still be read; `release()` aborts it and unlinks it from the lifetime. */
export interface Exchange {
  response: Response;
  readonly release: () => void;
}

export interface RequestSpec {
  method: 'POST' | 'GET' | 'DELETE';
  sessionId: string | undefined;
  protocolVersion: string | undefined;
  lastEventId?: string | undefined;
  body?: string;
  /** The calling actor's signal: stopping the actor aborts the request while it is owned by it. */
  signal: AbortSignal;
}

/**
 * Every HTTP exchange of one transport. Each request gets its own AbortController, linked to the
 * transport's lifetime while it runs and unlinked when it settles (H10): nothing piles up on a
 * shared signal.
 */
export class HttpClient {
  private lifetime = new AbortController();

  constructor(private readonly config: HttpConfig) {}

  get url(): URL {
    return this.config.url;
  }

  /** A new lifetime for a new start; the previous one stays aborted. */
  begin(): void {
    if (this.lifetime.signal.aborted) this.lifetime = new AbortController();
  }

  /** Aborts every request, stream and body still linked to this lifetime. */
  end(): void {
    this.lifetime.abort(new TransportClosedError('transport closed'));
  }

  async request(spec: RequestSpec): Promise<Exchange> {
    const lifetime = this.lifetime.signal;
    if (lifetime.aborted) throw new TransportClosedError('transport closed');
    const controller = new AbortController();
    let released = false;
    const onLifetimeEnd = () => {
      controller.abort(lifetime.reason);
    };
    const release = () => {
      if (released) return;
      released = true;
      lifetime.removeEventListener('abort', onLifetimeEnd);
      spec.signal.removeEventListener('abort', release);
      controller.abort();
    };
    lifetime.addEventListener('abort', onLifetimeEnd, { once: true });
    spec.signal.addEventListener('abort', release, { once: true });
    try {
      const headers = await this.headersFor(spec);
      const init: RequestInit = { ...this.config.init, method: spec.method, headers, signal: controller.signal };
      if (spec.body !== undefined) init.body = spec.body;
      const response = await this.config.fetch(this.config.url, init);
      return { response, release };
    } catch (error) {
      release();
      throw error;
    }
  }

  /** Hands the exchange to a new owner (a stream reader): the calling actor no longer aborts it. */
  static detach(exchange: Exchange, signal: AbortSignal): void {
    signal.removeEventListener('abort', exchange.release);
  }

  private async headersFor(spec: RequestSpec): Promise<Record<string, string>> {
    const base = this.config.headers;
    const headers: Record<string, string> = { ...base.custom };
    if (spec.method === 'POST') {
      headers['content-type'] = 'application/json';
      headers.accept = base.postAccept;
    } else if (spec.method === 'GET') {
      headers.accept = base.getAccept;
    }
    if (spec.sessionId !== undefined) headers['mcp-session-id'] = spec.sessionId;
    if (spec.protocolVersion !== undefined) headers['mcp-protocol-version'] = spec.protocolVersion;
    if (spec.lastEventId !== undefined) headers['last-event-id'] = spec.lastEventId;
    if (this.config.tokens !== undefined) {
      const tokens = await this.config.tokens.tokens();
      if (tokens !== undefined) headers.authorization = `Bearer ${tokens.access_token}`;
    }
    return headers;
  }
}
