/**
 * Runs one model path for real: a real `StreamableHTTPClientTransport` (src/index.ts) against the
 * puppet server, each model event done as what it stands for (a transport call, or the server's
 * answer to a request it holds), and after every step two checks, waited for (bounded) since
 * HTTP takes its time:
 *
 * - the running transport's `actor.getSnapshot().value` is the state the path says;
 * - the requests the server holds (kind, and for calls the session they carried and whether they
 *   are a re-send) are the ones the model expects: e.g. a DELETE in closing.deleting, a token
 *   request in authorizing, nothing left over after close.
 *
 * and two properties of the world: a send() or terminateSession() on a transport that is not
 * running is refused at once, and once closed or failed nobody still waits on one (F2). An actor
 * that stops with an error fails the step that caused it.
 *
 * The real chart's microsteps are recorded through the transport's `inspect` option, for coverage.
 */
import { expect } from 'vitest';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { manualNetwork, StreamableHTTPClientTransport, type FetchLike, type JSONRPCMessage } from '../../src/index.js';
import { canonical, lateInspector, ModelWorld } from './driver.js';
import { callerEvents, type ModelConfig, type ModelEvent, type ModelSnapshot } from './model.js';
import {
  headerOf,
  startScriptedServer,
  type Reply,
  type RecordedRequest,
  type ScriptedServer,
  type RpcId,
} from '../support/scripted-server.js';

const PROTOCOL_VERSION = '2025-11-25';
/** deleteTimeout when the model leaves the DELETE on close unanswered, and when it answers it. */
const SHORT_DELETE_TIMEOUT = 1_000;
const LONG_DELETE_TIMEOUT = 600_000;
const PRESET_SESSION = 'preset-session';

export const initializeRequest = {
  jsonrpc: '2.0' as const,
  id: 'init',
  method: 'initialize',
  params: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'model', version: '1.0.0' } },
};

/** The puppet's answer to an initialize. */
export function initializeResult(id: RpcId | null) {
  return {
    jsonrpc: '2.0',
    id,
    result: { protocolVersion: PROTOCOL_VERSION, capabilities: {}, serverInfo: { name: 'puppet', version: '1.0.0' } },
  };
}

/**
 * Every fetch numbered (a header the server records); one the client aborts is abandoned at that
 * very moment, before the server can notice, so a replaced request is never taken for its successor.
 */
export function numberedFetch(): { abandoned: Set<string>; fetchFn: FetchLike } {
  const abandoned = new Set<string>();
  let fetches = 0;
  const fetchFn: FetchLike = (url, init) => {
    const client = String(++fetches);
    const headers = new Headers(init?.headers);
    headers.set('x-model-request', client);
    const signal = init?.signal ?? undefined;
    if (signal?.aborted === true) abandoned.add(client);
    signal?.addEventListener('abort', () => abandoned.add(client), { once: true });
    return fetch(url, { ...init, headers });
  };
  return { abandoned, fetchFn };
}

/** The requests a server holds that the client has not abandoned (the number `numberedFetch` gave each fetch). */
export function heldByClient(server: ScriptedServer, abandoned: ReadonlySet<string>): RecordedRequest[] {
  return server.held().filter((request) => {
    const client = headerOf(request, 'x-model-request');
    return client === undefined || !abandoned.has(client);
  });
}

/**
 * An OAuth client with a refresh token: authorizing is a refresh, which the puppet answers (or
 * refuses). After `noRedirect`, the host cannot send the user anywhere (the flow fails outright).
 */
export class RefreshingProvider implements OAuthClientProvider {
  readonly redirectUrl = 'http://127.0.0.1/callback';
  readonly redirects: URL[] = [];
  noRedirect = false;
  private information: OAuthClientInformationMixed = { client_id: 'model-client' };
  private current: OAuthTokens;
  private verifier = '';

  constructor(issuer: string) {
    this.current = { access_token: 'token-0', token_type: 'Bearer', refresh_token: 'refresh-0', issuer };
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'model',
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  clientInformation(): OAuthClientInformationMixed {
    return this.information;
  }

  saveClientInformation(information: OAuthClientInformationMixed): void {
    this.information = information;
  }

  tokens(): OAuthTokens {
    return this.current;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.current = tokens;
  }

  redirectToAuthorization(url: URL): void {
    if (this.noRedirect) throw new Error('this host cannot send the user to authorize');
    this.redirects.push(url);
  }

  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }

  codeVerifier(): string {
    return this.verifier;
  }
}

interface Tracked {
  label: string;
  outcome: 'pending' | 'resolved' | 'rejected';
}

export const json = (body: unknown, headers: Record<string, string> = {}, status = 200): Reply => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(body),
});
export const text = (status: number, body: string): Reply => ({ status, headers: { 'content-type': 'text/plain' }, body });

/** The kind of held request a server event answers. */
function kindAnswered(event: ModelEvent): string {
  if ('tag' in event) return `req:${event.tag}`;
  if ('kind' in event) return `lpost:${event.kind}`;
  const [prefix] = event.type.split('.');
  if (prefix === 'get') return event.type === 'get.drop' ? 'stream' : 'get';
  return prefix ?? event.type;
}

/** What the model says the server holds. */
export function expectedHeld(snapshot: ModelSnapshot): string[] {
  const context = snapshot.context;
  const held: string[] = [...context.out];
  if (context.get === 'parked') held.push('get');
  if (context.get === 'stream') held.push('stream');
  if (context.del) held.push('del');
  if (context.token) held.push('token');
  return held.sort();
}

const rejectingStates = ['idle', 'closing', 'closed', 'failed'] as const;

export class World extends ModelWorld<ModelSnapshot, ModelEvent> {
  private readonly tracked: Tracked[] = [];
  /** Calls sent, and whether they were answered (a real or a synthetic response) or rejected. */
  private readonly calls = new Map<RpcId, 'outstanding' | 'answered' | 'rejected'>();
  /** Calls the server answered 404: a later POST of the same id is the chart's re-send. */
  private readonly retried = new Set<RpcId>();
  private nextCall = 1;
  private sessions = 0;
  private tokens = 0;
  private previous: ModelSnapshot | undefined;
  private lastTracked: Tracked | undefined;

  private constructor(
    readonly config: ModelConfig,
    puppet: ScriptedServer,
    transport: StreamableHTTPClientTransport,
    private readonly abandoned: ReadonlySet<string>,
    network: { setOnline(online: boolean): void },
  ) {
    super(puppet, transport, network, [...callerEvents, ...config.events]);
    transport.onmessage = (message) => {
      if ('id' in message && message.id != null && !('method' in message) && this.calls.has(message.id)) {
        this.calls.set(message.id, 'answered');
      }
    };
    transport.onerror = () => undefined;
  }

  static async open(config: ModelConfig): Promise<World> {
    const puppet = await startScriptedServer({ defaults: 'park' });
    const { abandoned, fetchFn } = numberedFetch();
    // The World (and its coverage) exists only once the transport does; its first events wait for it.
    const inspector = lateInspector();
    const network = manualNetwork(true);
    const transport = new StreamableHTTPClientTransport(puppet.url, {
      network,
      standaloneStream: config.standalone,
      sessionRecovery: config.recovery,
      legacyFallback: config.legacy,
      authProvider: config.auth ? new RefreshingProvider(`${puppet.origin}/`) : undefined,
      sessionId: config.presetSession ? PRESET_SESSION : undefined,
      fetch: fetchFn,
      deleteTimeout: config.deleteTimeout === 'short' ? SHORT_DELETE_TIMEOUT : LONG_DELETE_TIMEOUT,
      ...(config.legacyEndpointTimeout === 'short' ? { legacyEndpointTimeout: SHORT_DELETE_TIMEOUT } : {}),
      // A standalone GET that fails waits at the ceiling at once (G5), and never comes back within a path.
      reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 3_600_000, maxReconnectionDelay: 3_600_000 },
      inspect: inspector.inspect,
    });
    const world = new World(config, puppet, transport, abandoned, network);
    inspector.attach(world.coverage);
    return world;
  }

  private track(promise: Promise<void>, label: string, call?: RpcId): void {
    const entry: Tracked = { label, outcome: 'pending' };
    this.tracked.push(entry);
    this.lastTracked = entry;
    promise.then(
      () => {
        entry.outcome = 'resolved';
      },
      () => {
        entry.outcome = 'rejected';
        if (call !== undefined) this.calls.set(call, 'rejected');
      },
    );
  }

  private send(message: JSONRPCMessage, label: string, call?: RpcId): void {
    this.track(this.transport.send(message), label, call);
  }

  private outstandingCalls(): RpcId[] {
    return [...this.calls].filter(([, state]) => state === 'outstanding').map(([id]) => id);
  }

  /** Requests the server holds that the client has not given up. */
  private held(): RecordedRequest[] {
    return heldByClient(this.puppet, this.abandoned);
  }

  /** What each held request is, in the model's words. */
  heldKinds(): string[] {
    const current = this.transport.sessionId;
    return this.held()
      .map((request) => this.kindOf(request, current))
      .sort();
  }

  private kindOf(request: RecordedRequest, current: string | undefined): string {
    if (request.path === '/token') return 'token';
    if (request.path === '/messages') return `lpost:${request.rpc === 'initialize' ? 'init' : request.id !== undefined ? 'req' : 'note'}`;
    if (request.method === 'DELETE') return 'del';
    if (request.method === 'GET') return request.state === 'streaming' ? 'stream' : 'get';
    if (request.rpc === 'initialize') return 'init';
    if (request.rpc === 'notifications/initialized') return 'initd';
    if (request.id === undefined) return 'note';
    const carried = request.session === undefined ? 'nos' : request.session === current ? 'cur' : 'old';
    return `req:${carried}:${this.retried.has(request.id) ? 'retry' : 'caller'}`;
  }

  private heldOfKind(kind: string): RecordedRequest {
    const current = this.transport.sessionId;
    const request = this.held().find((candidate) => this.kindOf(candidate, current) === kind);
    if (request === undefined)
      throw new Error(`the server holds no ${kind} request (it holds: ${this.heldKinds().join(', ') || 'nothing'})`);
    return request;
  }

  private unauthorized(): Reply {
    return json(
      { error: 'invalid_token', error_description: 'token refused' },
      {
        'www-authenticate': `Bearer error="invalid_token", resource_metadata="${this.puppet.resourceMetadataUrl}"`,
      },
      401,
    );
  }

  /** Does what a model event stands for. */
  protected async perform(event: Exclude<ModelEvent, { type: 'net.offline' | 'net.online' }>): Promise<void> {
    this.lastTracked = undefined;
    switch (event.type) {
      case 'start':
        await this.transport.start();
        return;
      case 'close':
        this.track(this.transport.close(), 'close()');
        return;
      case 'terminate':
        this.track(this.transport.terminateSession(), 'terminateSession()');
        return;
      case 'setProtocolVersion':
        this.transport.setProtocolVersion(PROTOCOL_VERSION);
        return;
      case 'send.initialize':
        this.send(initializeRequest, 'send(initialize)');
        return;
      case 'send.initialized':
        this.send({ jsonrpc: '2.0', method: 'notifications/initialized' }, 'send(notifications/initialized)');
        return;
      case 'send.request': {
        const id = this.nextCall++;
        this.calls.set(id, 'outstanding');
        this.send({ jsonrpc: '2.0', id, method: 'tools/list' }, `send(tools/list #${id})`, id);
        return;
      }
      case 'send.notification':
        this.send({ jsonrpc: '2.0', method: 'notifications/roots/list_changed' }, 'send(notifications/roots/list_changed)');
        return;
      case 'send.cancel': {
        const outstanding = this.outstandingCalls();
        expect(outstanding, 'the model cancels the one call outstanding').toHaveLength(1);
        const [requestId] = outstanding as [RpcId];
        this.send(
          { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'model' } },
          `send(cancel #${requestId})`,
        );
        return;
      }
      case 'del.hang':
        // The DELETE stays unanswered; deleteTimeout ends the wait.
        return;
      default:
        this.answer(event);
    }
  }

  private answer(event: Exclude<ModelEvent, { type: (typeof callerEvents)[number] | 'del.hang' }>): void {
    const request = this.heldOfKind(kindAnswered(event));
    const id = request.id ?? null;
    const puppet = this.puppet;
    switch (event.type) {
      case 'init.ok':
        puppet.answer(request, json(initializeResult(id), { 'mcp-session-id': `session-${++this.sessions}` }));
        return;
      case 'init.okNoSession':
        puppet.answer(request, json(initializeResult(id)));
        return;
      case 'init.rpcError':
        puppet.answer(request, json({ jsonrpc: '2.0', id, error: { code: -32602, message: 'unsupported protocol version' } }));
        return;
      case 'init.401':
      case 'initd.401':
      case 'req.401':
      case 'get.401':
        puppet.answer(request, this.unauthorized());
        return;
      case 'init.404':
      case 'initd.404':
      case 'req.404':
      case 'get.404':
        if (event.type === 'req.404' && request.id !== undefined) this.retried.add(request.id);
        puppet.answer(request, text(404, 'session not found'));
        return;
      case 'init.405':
      case 'get.405':
        puppet.answer(request, { status: 405, headers: { allow: 'POST, DELETE' } });
        return;
      case 'init.500':
      case 'initd.500':
      case 'req.500':
      case 'get.500':
      case 'del.500':
      case 'lpost.500':
        puppet.answer(request, text(500, 'internal error'));
        return;
      case 'initd.202':
      case 'note.202':
      case 'lpost.202':
        puppet.answer(request, { status: 202 });
        return;
      case 'req.ok':
        // An event stream carrying the response (a POST child reads it to its response; the data
        // plane too); initialize and the other answers are JSON.
        puppet.answer(request, {
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
          body: `data: ${JSON.stringify({ jsonrpc: '2.0', id, result: { tools: [] } })}\n\n`,
        });
        return;
      case 'req.cut':
        // An event stream that ends with a notification and no response, and no event id (R2).
        puppet.answer(request, {
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
          body: `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'cut' } })}\n\n`,
        });
        return;
      case 'req.otherSession':
        puppet.answer(request, json({ jsonrpc: '2.0', id, result: { tools: [] } }, { 'mcp-session-id': 'another-session' }));
        return;
      case 'get.stream':
        puppet.answer(request, { status: 200, headers: { 'content-type': 'text/event-stream' }, body: ': listening\n\n', keepOpen: true });
        return;
      case 'get.endpoint':
        puppet.answer(request, {
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
          body: 'event: endpoint\ndata: /messages?session=legacy\n\n',
          keepOpen: true,
        });
        return;
      case 'get.silent':
        puppet.answer(request, {
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
          body: ': no endpoint yet\n\n',
          keepOpen: true,
        });
        return;
      case 'get.drop':
        puppet.endStream(request);
        return;
      case 'del.200':
        puppet.answer(request, { status: 200 });
        return;
      case 'del.drop':
        puppet.drop(request);
        return;
      case 'token.ok': {
        const n = ++this.tokens;
        puppet.answer(request, json({ access_token: `token-${n}`, token_type: 'Bearer', expires_in: 3600, refresh_token: `refresh-${n}` }));
        return;
      }
      case 'token.500':
        puppet.answer(request, json({ error: 'server_error', error_description: 'try later' }, {}, 500));
        return;
    }
  }

  /** An authorization the chart gave up (close, failure) still has its token request at the server: it is nobody's now. */
  private dropOrphans(expected: ModelSnapshot): void {
    if (expected.context.token) return;
    for (const request of this.held()) if (request.path === '/token' && request.state === 'parked') this.puppet.drop(request);
  }

  private matches(expected: ModelSnapshot): boolean {
    const value = this.transport.actor.getSnapshot().value;
    return canonical(value) === canonical(expected.value) && canonical(this.heldKinds()) === canonical(expectedHeld(expected));
  }

  /** After each step: the transport is in the model's state and the server holds what the model says. */
  protected async check(expected: ModelSnapshot): Promise<void> {
    await this.settle(() => {
      this.dropOrphans(expected);
      return this.matches(expected);
    });
    expect({ state: this.transport.actor.getSnapshot().value, held: this.heldKinds() }).toEqual({
      state: expected.value,
      held: expectedHeld(expected),
    });
    this.checkWorld(expected);
    this.previous = expected;
    // What the next step tracks is its own (a step the driver does, the network's, tracks nothing).
    this.lastTracked = undefined;
  }

  /** Properties of the world that are cheap to see. */
  private checkWorld(expected: ModelSnapshot): void {
    const before = this.previous;
    const last = this.lastTracked;
    // A send or terminateSession() on a transport that is not running is refused at once.
    const refusing =
      before !== undefined && (rejectingStates.some((state) => before.matches(state)) || before.matches({ open: { session: 'closing' } }));
    if (refusing && last !== undefined && last.label !== 'close()') {
      expect(last.outcome, `${last.label} in ${JSON.stringify(before.value)}`).toBe('rejected');
    }
    // F2: once closed or failed, nobody still waits on send() or terminateSession().
    if (expected.matches('closed') || expected.matches('failed')) {
      const waiting = this.tracked.filter((entry) => entry.outcome === 'pending' && entry.label !== 'close()').map((entry) => entry.label);
      expect(waiting, `still waiting in ${JSON.stringify(expected.value)}`).toEqual([]);
    }
  }
}
