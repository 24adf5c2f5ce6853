/**
 * Runs one path of the modern model (modern-model.ts) for real: a real transport (src/index.ts)
 * against the puppet server, driven as the v2 SDK Client would drive it (start(), send() of
 * requests in the 2026-07-28 envelope, setProtocolVersion(), close(), terminateSession()), each
 * model event done as what it stands for. After every step, waited for (bounded):
 *
 * - the chart's state value is the model's;
 * - the requests the server holds (what each is) are the ones the model says;
 * - the requests whose caller still waits (no response, no error response, send() not refused)
 *   are the ones the model says (a caller that gave one up no longer counts);
 * - once closed or failed, no send() is left pending (F2); the actor never crashed.
 *
 * A few answers are checked where they are the point: the probe answered from before carries the
 * server's earlier result (E10), the modern-only refusal names 2026-07-28 (E9), nothing of this era
 * carries a session ID back or opens a GET (E4, E5).
 */
import { expect } from 'vitest';
import { manualNetwork, parseSavedState, StreamableHTTPClientTransport, type JSONRPCMessage } from '../../src/index.js';
import { cancelledRequestId } from '../../machines/connection/messages.js';
import { heldByClient, json, numberedFetch, RefreshingProvider, text } from './executor.js';
import { lateInspector, ModelWorld } from './driver.js';
import { startScriptedServer, type RecordedRequest, type ScriptedServer } from '../support/scripted-server.js';
import type { HeldKind, ModernConfig, ModernEvent, ModernSnapshot, Waiting } from './modern-model.js';

const MODERN = '2026-07-28';
const META = { 'io.modelcontextprotocol/protocolVersion': MODERN };
const DISCOVER_RESULT = { supportedVersions: [MODERN], capabilities: { tools: {} }, serverInfo: { name: 'puppet', version: '2.0.0' } };
const RESTORED_DISCOVER = { ...DISCOVER_RESULT, serverInfo: { name: 'puppet-restored', version: '2.0.0' } };

interface Sent {
  kind: Waiting | 'note' | 'terminate' | 'close';
  id: string | number | undefined;
  /** pending: send() not settled and no answer; open: send() resolved, no answer yet; answered; refused; abandoned: the caller gave it up. */
  state: 'pending' | 'open' | 'answered' | 'refused' | 'abandoned';
  /** The send() promise itself is still pending. */
  promisePending: boolean;
  response?: JSONRPCMessage;
}

export class ModernWorld extends ModelWorld<ModernSnapshot, ModernEvent> {
  private readonly sent: Sent[] = [];
  private nextId = 1;
  private listenAbort: AbortController | undefined;
  private callAbort: AbortController | undefined;
  private warnings: Error[] = [];

  private constructor(
    readonly config: ModernConfig,
    puppet: ScriptedServer,
    transport: StreamableHTTPClientTransport,
    private readonly abandoned: ReadonlySet<string>,
    network: { setOnline(online: boolean): void },
    private readonly provider: RefreshingProvider | undefined,
  ) {
    super(puppet, transport, network, config.events);
    transport.onmessage = (message) => {
      // E13: the server's notifications/cancelled for a request ends it for its caller (the v2 Client reads a remote close).
      const cancelled = cancelledRequestId(message);
      if (cancelled === undefined && (!('id' in message) || 'method' in message)) return;
      const id = cancelled ?? ('id' in message ? message.id : undefined);
      const entry = this.sent.find((candidate) => candidate.id === id && candidate.state !== 'abandoned');
      if (entry === undefined) return;
      entry.state = 'answered';
      entry.response = message;
    };
    transport.onerror = (error) => {
      this.warnings.push(error);
    };
  }

  static async open(config: ModernConfig): Promise<ModernWorld> {
    const puppet = await startScriptedServer({ defaults: 'park' });
    const { abandoned, fetchFn } = numberedFetch();
    const inspector = lateInspector();
    const network = manualNetwork(true);
    const provider = config.auth ? new RefreshingProvider(`${puppet.origin}/`) : undefined;
    const transport = new StreamableHTTPClientTransport(puppet.url, {
      network,
      authProvider: provider,
      fetch: fetchFn,
      reissue: config.reissue === true ? 'reads' : undefined,
      restoreState: config.restored
        ? parseSavedState({ v: 1, endpoint: puppet.url.href, era: 'modern', protocolVersion: MODERN, discover: RESTORED_DISCOVER })
        : undefined,
      // Nothing in this era resumes (E5); a retry would only hide a wrong turn.
      reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 3_600_000, maxReconnectionDelay: 3_600_000 },
      inspect: inspector.inspect,
    });
    const world = new ModernWorld(config, puppet, transport, abandoned, network, provider);
    inspector.attach(world.coverage);
    return world;
  }

  /** Tracks a send: entered before it is made, since an answer can come within it (E10: the probe answered from before). */
  private track(kind: Sent['kind'], id: Sent['id'], send: () => Promise<void>): Sent {
    const entry: Sent = { kind, id, state: 'pending', promisePending: true };
    this.sent.push(entry);
    send().then(
      () => {
        entry.promisePending = false;
        if (entry.state === 'pending') entry.state = 'open';
      },
      () => {
        entry.promisePending = false;
        if (entry.state === 'pending' || entry.state === 'open') entry.state = 'refused';
      },
    );
    return entry;
  }

  private request(kind: Waiting, method: string, params: Record<string, unknown> = {}, signal?: AbortSignal): Sent {
    const id = `${kind}-${this.nextId++}`;
    const message: JSONRPCMessage = { jsonrpc: '2.0', id, method, params: { ...params, _meta: META } };
    return this.track(kind, id, () => this.transport.send(message, signal === undefined ? undefined : { requestSignal: signal }));
  }

  /** Requests the server holds that the client has not given up. */
  private held(): RecordedRequest[] {
    return heldByClient(this.puppet, this.abandoned);
  }

  private kindOf(request: RecordedRequest): string {
    if (request.path === '/token') return 'token';
    const streaming = request.state === 'streaming';
    switch (request.rpc) {
      case 'server/discover':
        return 'probe';
      case 'initialize':
        return 'init';
      case 'tools/call':
      case 'tools/list':
        return streaming ? 'callStream' : 'call';
      case 'subscriptions/listen':
        return streaming ? 'listenStream' : 'listen';
      case 'notifications/cancelled':
        return 'note';
      default:
        return `${request.method} ${request.rpc ?? request.path}`;
    }
  }

  private heldKinds(): string[] {
    return this.held()
      .map((request) => this.kindOf(request))
      .sort();
  }

  private heldOfKind(kind: HeldKind): RecordedRequest {
    const request = this.held().find((candidate) => this.kindOf(candidate) === kind);
    if (request === undefined) throw new Error(`the server holds no ${kind} (it holds: ${this.heldKinds().join(', ') || 'nothing'})`);
    return request;
  }

  private waiting(): Waiting[] {
    return this.sent
      .filter((entry) => entry.kind !== 'note' && entry.kind !== 'terminate' && entry.kind !== 'close')
      .filter((entry) => entry.state === 'pending' || entry.state === 'open')
      .map((entry) => entry.kind as Waiting)
      .sort();
  }

  private latest(kind: Sent['kind']): Sent | undefined {
    return this.sent.filter((entry) => entry.kind === kind).at(-1);
  }

  protected async perform(event: ModernEvent): Promise<void> {
    const { puppet, transport } = this;
    switch (event.type) {
      case 'start':
        // the E4 warning is once per start
        this.warnings = [];
        await transport.start();
        return;
      case 'probe':
        this.request('probe', 'server/discover');
        return;
      case 'init': {
        // A 2025-era Client's initialize (no envelope), as the 1.x SDK sends it.
        const id = `init-${this.nextId++}`;
        const message: JSONRPCMessage = {
          jsonrpc: '2.0',
          id,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'model', version: '1.0.0' } },
        };
        this.track('init', id, () => transport.send(message));
        return;
      }
      case 'setModern':
        transport.setProtocolVersion(MODERN);
        return;
      case 'setLegacy':
        transport.setProtocolVersion('2025-11-25');
        return;
      case 'call':
        this.callAbort = new AbortController();
        // E5: with reissue, the call is a read (which may be sent again); else a tool call.
        if (this.config.reissue === true) this.request('call', 'tools/list', {}, this.callAbort.signal);
        else this.request('call', 'tools/call', { name: 'echo', arguments: { text: 'model' } }, this.callAbort.signal);
        return;
      case 'call.abort': {
        const entry = this.latest('call');
        if (entry !== undefined) entry.state = 'abandoned';
        this.callAbort?.abort();
        return;
      }
      case 'listen':
        this.listenAbort = new AbortController();
        this.request('listen', 'subscriptions/listen', { notifications: { toolsListChanged: true } }, this.listenAbort.signal);
        return;
      case 'listen.abort': {
        const entry = this.latest('listen');
        if (entry !== undefined) entry.state = 'abandoned';
        this.listenAbort?.abort();
        return;
      }
      case 'cancel': {
        const call = this.latest('call');
        if (call === undefined) throw new Error('no call to cancel');
        call.state = 'abandoned';
        this.track('note', undefined, () =>
          transport.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: call.id } }),
        );
        return;
      }
      case 'terminate': {
        const entry = this.track('terminate', undefined, () => transport.terminateSession());
        await new Promise<void>((resolve) => setImmediate(resolve));
        expect(entry.state, 'terminateSession() in the 2026-07-28 era is acknowledged at once').toBe('open');
        return;
      }
      case 'close':
        // A caller whose send() resolved hears of the close from onclose (the Client ends its requests there), not per request.
        for (const entry of this.sent) if (entry.state === 'open') entry.state = 'abandoned';
        this.track('close', undefined, () => transport.close());
        return;
      case 'probe.result': {
        const request = this.heldOfKind('probe');
        puppet.answer(request, json({ jsonrpc: '2.0', id: request.id, result: DISCOVER_RESULT }));
        return;
      }
      case 'probe.rpcError': {
        const request = this.heldOfKind('probe');
        puppet.answer(
          request,
          json(
            {
              jsonrpc: '2.0',
              id: request.id,
              error: { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2025-11-25'] } },
            },
            {},
            400,
          ),
        );
        return;
      }
      case 'probe.400':
        puppet.answer(this.heldOfKind('probe'), text(400, 'Bad Request: unsupported MCP-Protocol-Version'));
        return;
      case 'init.modernOnly': {
        const request = this.heldOfKind('init');
        puppet.answer(
          request,
          json(
            {
              jsonrpc: '2.0',
              id: request.id,
              error: { code: -32022, message: 'Unsupported protocol version', data: { supported: [MODERN] } },
            },
            {},
            400,
          ),
        );
        return;
      }
      case 'call.json': {
        const request = this.heldOfKind('call');
        puppet.answer(request, json({ jsonrpc: '2.0', id: request.id, result: { content: [] } }));
        return;
      }
      case 'call.session': {
        const request = this.heldOfKind('call');
        puppet.answer(request, json({ jsonrpc: '2.0', id: request.id, result: { content: [] } }, { 'mcp-session-id': 'sneaky-session' }));
        return;
      }
      case 'call.sse':
        puppet.answer(this.heldOfKind('call'), {
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
          body: `id: ev-1\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } })}\n\n`,
          keepOpen: true,
        });
        return;
      case 'stream.response': {
        const request = this.heldOfKind('callStream');
        puppet.write(request, `data: ${JSON.stringify({ jsonrpc: '2.0', id: request.id, result: { content: [] } })}\n\n`);
        puppet.endStream(request);
        return;
      }
      case 'stream.cut':
        puppet.endStream(this.heldOfKind('callStream'));
        return;
      case 'call.404': {
        const request = this.heldOfKind('call');
        puppet.answer(request, json({ jsonrpc: '2.0', id: request.id, error: { code: -32601, message: 'Method not found' } }, {}, 404));
        return;
      }
      case 'call.500':
        puppet.answer(this.heldOfKind('call'), text(500, 'internal error'));
        return;
      case 'call.refused':
        // F4: the connection closes before any response, as a server going down leaves it.
        puppet.drop(this.heldOfKind('call'));
        return;
      case 'probe.refused':
        puppet.drop(this.heldOfKind('probe'));
        return;
      case 'call.401':
        puppet.answer(
          this.heldOfKind('call'),
          json(
            { error: 'invalid_token', error_description: 'token refused' },
            { 'www-authenticate': `Bearer error="invalid_token", resource_metadata="${puppet.resourceMetadataUrl}"` },
            401,
          ),
        );
        return;
      case 'listen.open':
        puppet.answer(this.heldOfKind('listen'), {
          status: 200,
          headers: { 'content-type': 'text/event-stream' },
          body: ': listening\n\n',
          keepOpen: true,
        });
        return;
      case 'listen.end': {
        const request = this.heldOfKind('listenStream');
        puppet.write(request, `data: ${JSON.stringify({ jsonrpc: '2.0', id: request.id, result: {} })}\n\n`);
        puppet.endStream(request);
        return;
      }
      case 'listen.drop':
        puppet.drop(this.heldOfKind('listenStream'));
        return;
      case 'listen.cancel': {
        // E13: the server's other graceful end of a listen: notifications/cancelled for it, then the end.
        const request = this.heldOfKind('listenStream');
        const cancelled = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: request.id, reason: 'server' } };
        puppet.write(request, `data: ${JSON.stringify(cancelled)}\n\n`);
        puppet.endStream(request);
        return;
      }
      case 'note.202':
        puppet.answer(this.heldOfKind('note'), { status: 202 });
        return;
      case 'token.ok':
        puppet.answer(
          this.heldOfKind('token'),
          json({ access_token: 'token-1', token_type: 'Bearer', expires_in: 3600, refresh_token: 'refresh-1' }),
        );
        return;
      case 'token.500':
        puppet.answer(this.heldOfKind('token'), json({ error: 'server_error', error_description: 'try later' }, {}, 500));
        return;
      case 'token.fatal':
        if (this.provider !== undefined) this.provider.noRedirect = true;
        puppet.answer(this.heldOfKind('token'), json({ error: 'server_error', error_description: 'try later' }, {}, 500));
        return;
    }
  }

  private observed(): { state: unknown; held: string[]; waiting: Waiting[] } {
    return { state: this.transport.actor.getSnapshot().value, held: this.heldKinds(), waiting: this.waiting() };
  }

  /** An authorization the chart gave up (close, failure) still has its token request at the server: it is nobody's now. */
  private dropOrphans(expected: ModernSnapshot): void {
    if (expected.context.held.includes('token')) return;
    for (const request of this.held()) if (request.path === '/token' && request.state === 'parked') this.puppet.drop(request);
  }

  protected async check(expected: ModernSnapshot): Promise<void> {
    const wanted = { state: expected.value, held: [...expected.context.held], waiting: [...expected.context.waiting] };
    await this.settleOn(
      () => this.observed(),
      wanted,
      () => {
        this.dropOrphans(expected);
      },
    );
    const seen = this.observed();
    expect(seen.state, 'the chart is in the state the model says').toEqual(wanted.state);
    expect(seen.held, 'held requests: the server holds what the model says').toEqual(wanted.held);
    expect(seen.waiting, 'waiting callers: the requests still waiting for an answer are the ones the model says').toEqual(wanted.waiting);
    // E4, E5: this era opens no GET, sends no DELETE, and never sends a session ID.
    for (const request of this.puppet.requests) {
      if (request.path !== '/mcp') continue;
      expect(request.method, 'only POSTs in the 2026-07-28 era').toBe('POST');
      expect(request.session, 'no session ID is sent').toBeUndefined();
      // E3: every POST but a 2025-era initialize says 2026-07-28 in MCP-Protocol-Version.
      if (request.rpc !== 'initialize') {
        expect(request.headers['mcp-protocol-version'], `MCP-Protocol-Version of ${request.rpc ?? 'a POST'}`).toBe(MODERN);
      }
    }
    // E10: the probe's result is the server's (the saved one for a restored transport), also when answered from before.
    const probe = this.latest('probe');
    if (probe?.response !== undefined && 'result' in probe.response) {
      expect(probe.response.result).toEqual(this.config.restored ? RESTORED_DISCOVER : DISCOVER_RESULT);
    }
    // E4: a session ID from this era's server is ignored with one warning.
    expect(this.warnings.filter((warning) => /no sessions/.test(warning.message)).length).toBe(Math.min(expected.context.warned, 1));
    // E9: the modern-only refusal names the fix.
    const init = this.latest('init');
    if (init?.response !== undefined && 'error' in init.response) expect(init.response.error.message).toMatch(/2026-07-28/);
    // F2: once closed or failed, no send() is left pending.
    if (expected.matches('closed') || expected.matches('failed')) {
      const pending = this.sent.filter((entry) => entry.promisePending && entry.kind !== 'close').map((entry) => entry.kind);
      expect(pending, `still waiting in ${JSON.stringify(expected.value)}`).toEqual([]);
    }
  }
}
