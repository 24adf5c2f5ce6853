/**
 * Runs one path of a stream model (stream-models.ts) for real: a real transport from the Node entry
 * (requests through node:http, H11), in a session the executor opens first (initialize and
 * notifications/initialized, answered by the puppet server), then each model event done as what it
 * stands for. After every step, waited for (bounded): the real stream machine's state is the
 * model's (no such actor when the model says there is none) and the server holds exactly the
 * stream's requests the model says. A resume's GET must carry the last resumable event id the
 * server sent (R1), or the caller's token.
 */
import { expect } from 'vitest';
import type { AnyActorRef } from 'xstate';
import { manualNetwork, StreamableHTTPClientTransport, type JSONRPCMessage } from '../../src/node.js';
import { machineIdOf } from './coverage.js';
import { initializeRequest, initializeResult, json, text } from './executor.js';
import { lateInspector, ModelWorld } from './driver.js';
import { startScriptedServer, type Reply, type RecordedRequest, type ScriptedServer } from '../support/scripted-server.js';
import type { Held, StreamConfig, StreamEvent, StreamSnapshot } from './stream-models.js';

/** streamIdleTimeout of the idle-watch configurations, and how often the server writes a comment on every stream not silenced. */
const IDLE_TIMEOUT_MS = 1_000;
const KEEPALIVE_MS = 100;
/** Reconnect waits: short ones end by themselves (and are still long enough to be seen), long ones never within a path. */
const SHORT_WAIT_MS = 300;
const LONG_WAIT_MS = 3_600_000;
const CALL_ID = 1;
const TOKEN = 'e0';

const call: JSONRPCMessage = { jsonrpc: '2.0', id: CALL_ID, method: 'tools/list' };
const notification: JSONRPCMessage = { jsonrpc: '2.0', method: 'notifications/roots/list_changed' };
const logMessage = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'model' } });
const eventStream = (body: string): Reply => ({ status: 200, headers: { 'content-type': 'text/event-stream' }, body, keepOpen: true });
const handshake = new Set(['initialize', 'notifications/initialized']);

/** The part of a stream actor's snapshot read here (xstate types a child's snapshot loosely). */
const snapshotOf = (actor: AnyActorRef) => actor.getSnapshot() as { status: string; value: unknown };

/** What a request the server holds is, in the model's words (the handshake and the DELETE are not the stream's). */
function heldKind(request: RecordedRequest): Held | undefined {
  if (request.method === 'GET') return request.state === 'streaming' ? 'getStream' : 'get';
  if (request.method !== 'POST' || (request.rpc !== undefined && handshake.has(request.rpc))) return undefined;
  return request.state === 'streaming' ? 'postStream' : 'post';
}

export class StreamWorld extends ModelWorld<StreamSnapshot, StreamEvent> {
  /** The wait the caller's reconnectionScheduler was handed, until the world ends it. */
  private pendingWait: (() => void) | undefined;
  /** Streams the server keeps silent (R9): no keep-alive comments. */
  private readonly silenced = new Set<RecordedRequest>();
  private keepAlive: NodeJS.Timeout | undefined;
  private nextEventId = 1;
  /** The Last-Event-ID a resume must send. */
  private resumeFrom: string | undefined;
  /** The caller's call has its outcome: a response (the server's, or the chart's error for it) or a rejected send(). */
  private settled = false;

  private constructor(
    readonly config: StreamConfig,
    puppet: ScriptedServer,
    transport: StreamableHTTPClientTransport,
    network: { setOnline(online: boolean): void },
  ) {
    super(puppet, transport, network, config.events);
    transport.onerror = () => undefined;
    transport.onmessage = (message) => {
      if ('id' in message && message.id === CALL_ID && !('method' in message)) this.settled = true;
    };
    if (config.idle) {
      this.keepAlive = setInterval(() => {
        for (const request of puppet.held())
          if (request.state === 'streaming' && !this.silenced.has(request)) puppet.write(request, ': alive\n\n');
      }, KEEPALIVE_MS);
    }
  }

  static async open(config: StreamConfig): Promise<StreamWorld> {
    const puppet = await startScriptedServer({ defaults: 'park' });
    const inspector = lateInspector();
    const network = manualNetwork(true);
    const wait = config.waits === 'short' ? SHORT_WAIT_MS : LONG_WAIT_MS;
    const scheduled: { world: StreamWorld | undefined } = { world: undefined };
    const transport = new StreamableHTTPClientTransport(puppet.url, {
      network,
      standaloneStream: config.machine === 'standalone',
      deleteTimeout: 600_000,
      streamIdleTimeout: config.idle ? IDLE_TIMEOUT_MS : undefined,
      reconnectionOptions: {
        maxRetries: config.maxRetries,
        initialReconnectionDelay: wait,
        maxReconnectionDelay: wait,
        reconnectionDelayGrowFactor: 1,
        jitter: false,
      },
      reconnectionScheduler:
        config.waits === 'scheduler'
          ? (reconnect) => {
              const world = scheduled.world;
              if (world === undefined) throw new Error('a reconnect wait before the world exists');
              world.pendingWait = reconnect;
              return () => {
                if (world.pendingWait === reconnect) world.pendingWait = undefined;
              };
            }
          : undefined,
      inspect: inspector.inspect,
    });
    const world = new StreamWorld(config, puppet, transport, network);
    scheduled.world = world;
    inspector.attach(world.coverage);
    await world.openSession();
    return world;
  }

  /** The session the stream lives in: initialize and initialized, answered at once. */
  private async openSession(): Promise<void> {
    await this.transport.start();
    const initialized = this.transport.send(initializeRequest);
    const init = await this.arrival((request) => request.rpc === 'initialize');
    this.puppet.answer(init, json(initializeResult(init.id ?? null), { 'mcp-session-id': 'stream-session' }));
    await initialized;
    const confirmed = this.transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    const initd = await this.arrival((request) => request.rpc === 'notifications/initialized');
    this.puppet.answer(initd, { status: 202 });
    await confirmed;
    const open = () => this.transport.actor.getSnapshot().matches({ open: { session: 'active' } });
    await this.settle(open);
    expect(open(), 'the session is open').toBe(true);
  }

  private async arrival(which: (request: RecordedRequest) => boolean): Promise<RecordedRequest> {
    let found: RecordedRequest | undefined;
    await this.settle(() => (found = this.puppet.held().find((request) => request.state === 'parked' && which(request))) !== undefined);
    if (found === undefined) throw new Error('the request never arrived');
    return found;
  }

  private heldOf(...kinds: Held[]): RecordedRequest {
    const request = this.puppet.held().find((candidate) => kinds.includes(heldKind(candidate) ?? 'none'));
    if (request === undefined)
      throw new Error(`the server holds no ${kinds.join(' or ')} (it holds: ${this.heldKinds().join(', ') || 'nothing'})`);
    return request;
  }

  private heldKinds(): Held[] {
    return this.puppet
      .held()
      .map(heldKind)
      .filter((kind) => kind !== undefined)
      .sort();
  }

  /** The real stream machine's actor: the session's standalone stream, or the one POST stream. */
  private streamActor(): AnyActorRef | undefined {
    const children = Object.entries(this.transport.actor.getSnapshot().children as Record<string, AnyActorRef | undefined>);
    const streams = children.filter(([id, child]) =>
      this.config.machine === 'standalone' ? id === 'standalone' : machineIdOf(child) === 'postStream',
    );
    expect(streams.length, 'at most one stream actor of that kind').toBeLessThanOrEqual(1);
    const actor = streams[0]?.[1];
    return actor !== undefined && snapshotOf(actor).status === 'active' ? actor : undefined;
  }

  /** A send() of the call: a rejection is its outcome; other sends' outcomes are not the stream's. */
  private sendTracked(promise: Promise<void>, isCall = false): void {
    promise.catch(() => {
      if (isCall) this.settled = true;
    });
  }

  protected perform(event: StreamEvent): void {
    const { puppet, transport } = this;
    switch (event.type) {
      case 'send.request':
        this.sendTracked(transport.send(call), true);
        return;
      case 'send.charted':
        this.sendTracked(transport.send(call, { onresumptiontoken: () => undefined }), true);
        return;
      case 'send.notification':
        this.sendTracked(transport.send(notification, { onresumptiontoken: () => undefined }));
        return;
      case 'resume':
        this.resumeFrom = TOKEN;
        this.sendTracked(transport.send(call, { resumptionToken: TOKEN }), true);
        return;
      case 'resume.bad':
        this.sendTracked(transport.send(call, { resumptionToken: 'caf\u00e9' }), true);
        return;
      case 'resumeStream':
        this.resumeFrom = TOKEN;
        this.sendTracked(transport.resumeStream(TOKEN));
        return;
      case 'close':
        this.sendTracked(transport.close());
        return;
      case 'wait.due': {
        const due = this.pendingWait;
        if (due === undefined) throw new Error('no reconnect wait is pending at the scheduler');
        this.pendingWait = undefined;
        due();
        return;
      }
      case 'get.stream': {
        const request = this.heldOf('get');
        // R1: a resume sends the last resumable event id back; the standalone stream resumes too (or starts fresh).
        if (this.config.machine === 'post') expect(request.headers['last-event-id'], 'Last-Event-ID of the resume').toBe(this.resumeFrom);
        puppet.answer(request, eventStream(': open\n\n'));
        return;
      }
      case 'get.404':
        puppet.answer(this.heldOf('get'), text(404, 'session not found'));
        return;
      case 'get.405':
        puppet.answer(this.heldOf('get'), { status: 405, headers: { allow: 'POST, DELETE' } });
        return;
      case 'get.401':
        puppet.answer(this.heldOf('get'), text(401, 'unauthorized'));
        return;
      case 'get.500':
        puppet.answer(this.heldOf('get'), text(500, 'internal error'));
        return;
      case 'get.503':
        puppet.answer(this.heldOf('get'), text(503, 'overloaded'));
        return;
      case 'post.json':
        puppet.answer(this.heldOf('post'), json({ jsonrpc: '2.0', id: CALL_ID, result: { tools: [] } }));
        return;
      case 'post.202':
        puppet.answer(this.heldOf('post'), { status: 202 });
        return;
      case 'post.sse':
        puppet.answer(this.heldOf('post'), eventStream(': open\n\n'));
        return;
      case 'post.500':
        puppet.answer(this.heldOf('post'), text(500, 'internal error'));
        return;
      case 'stream.event': {
        const id = `e${this.nextEventId++}`;
        puppet.write(this.heldOf('postStream', 'getStream'), `id: ${id}\ndata: ${logMessage}\n\n`);
        this.resumeFrom = id;
        return;
      }
      case 'stream.badId':
        // R11: an id that cannot be sent back as a header (not ASCII).
        puppet.write(this.heldOf('postStream', 'getStream'), `id: \u00e9${this.nextEventId++}\ndata: ${logMessage}\n\n`);
        return;
      case 'stream.response': {
        const stream = this.heldOf('postStream', 'getStream');
        puppet.write(stream, `data: ${JSON.stringify({ jsonrpc: '2.0', id: CALL_ID, result: { tools: [] } })}\n\n`);
        puppet.endStream(stream);
        return;
      }
      case 'stream.end':
        puppet.endStream(this.heldOf('postStream', 'getStream'));
        return;
      case 'stream.cancel': {
        // E13: notifications/cancelled for the call, then the end.
        const stream = this.heldOf('postStream', 'getStream');
        const cancelled = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: CALL_ID, reason: 'server' } };
        puppet.write(stream, `data: ${JSON.stringify(cancelled)}\n\n`);
        puppet.endStream(stream);
        return;
      }
      case 'stream.silence':
        this.silenced.add(this.heldOf('postStream', 'getStream'));
        return;
    }
  }

  private observed(withOutcome: boolean): { state: unknown; held: Held[]; settled?: boolean } {
    const actor = this.streamActor();
    const seen = { state: actor === undefined ? undefined : snapshotOf(actor).value, held: this.heldKinds() };
    return withOutcome ? { ...seen, settled: this.settled } : seen;
  }

  /** After each step: the stream machine is in the model's state and the server holds what the model says. */
  protected async check(expected: StreamSnapshot): Promise<void> {
    const resting = expected.status === 'done' || expected.value === 'idle';
    const seen = { state: resting ? undefined : expected.value, held: expected.context.held === 'none' ? [] : [expected.context.held] };
    // A call's outcome: settled once its stream machine ended, or the data plane answered it (so a
    // hand-over that ends at once, with no actor left to see, is still waited for and checked).
    const context = expected.context;
    const call = 'kind' in context && ['request', 'resume', 'badResume'].includes(context.kind);
    const wanted = call ? { ...seen, settled: expected.status === 'done' || (expected.value === 'idle' && !context.direct) } : seen;
    await this.settleOn(() => this.observed(call), wanted);
    expect(this.observed(call)).toEqual(wanted);
  }

  override async dispose(): Promise<void> {
    clearInterval(this.keepAlive);
    await super.dispose();
  }
}
