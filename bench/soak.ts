/**
 * `npm run soak`: a fault soak of this transport beside the SDKs' own, in the same run (issue 41).
 *
 * The SDKs' real servers on 127.0.0.1 (2025 era: the 1.x McpServer + StreamableHTTPServerTransport,
 * stateful, with an event store that replays every stream, test/support/event-store.ts; 2026-07-28
 * era: the v2 createMcpHandler, every answer an event stream), each behind a TCP fault proxy of its
 * own per lane (below) that resets connections (at once, or after some bytes of the answer), cuts
 * them cleanly (FIN) after some bytes, and stalls them. The backend is stopped and started again on
 * the same port during the run (every session lost). Calls run 16 in flight, each a tool call with
 * progress notifications (the notification stream), each bounded by the Client's own `timeout`.
 *
 * Four lanes, one after the other: era × {this transport, the SDK's transport} (1.x Client and
 * its StreamableHTTPClientTransport in the 2025 era; the v2 Client and its transport in the
 * 2026-07-28 era; this transport under the same Client as its SDK neighbour). The fault plan is
 * seeded: both lanes of an era get the same sequence of decisions (by connection order), the same
 * calls and the same restarts. After the fault phase the faults stop, and each transport must
 * answer a call again (a "dead transport" is one that cannot).
 *
 * Printed per lane: calls answered / failed typed / failed untyped / timed out (the Client's bound) /
 * hung (not settled by a generous deadline past that bound) / wrong answers; progress notifications
 * delivered / lost (on answered calls, on failed ones) / duplicated; dead transports; heap before and
 * after (after gc, servers closed). Every loop is bounded in count and in time.
 *
 *   npm run soak                      full profile, seeds SOAK_SEED or 1,2,3; writes bench/results/soak.md
 *   npm run soak -- --short           the CI profile (~1 min): one seed; exit 1 on hung calls, duplicates
 *                                     or dead transports of THIS transport (never for the SDK's)
 *   npm run soak -- --seed 7          one seed (or --seeds 4,5,6)
 */
import { createServer as createNetServer, connect as netConnect, type Server as NetServer, type Socket } from 'node:net';
import type { Server } from 'node:http';
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as SdkTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as ClientV2, StreamableHTTPClientTransport as SdkTransportV2 } from '@modelcontextprotocol/client';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpHandler, McpServer as McpServerV2, type McpHttpHandler } from '@modelcontextprotocol/server';
import { StreamableHTTPClientTransport, McpTransportError, connectionStatus } from '../src/node.js';
import { OrderedEventStore } from '../test/support/event-store.js';
import { fetchServer, serveFetch } from '../test/support/v2-server.js';
import { listenLocal, rpcMethodOf, shutDown } from '../test/support/http.js';

// ---------------------------------------------------------------------------------------------
// Profile and arguments

interface Profile {
  name: 'short' | 'full';
  /** Calls per lane, at most. */
  calls: number;
  inFlight: number;
  /** The fault phase: calls start only within it (ms). */
  faultMs: number;
  /** When the backend restarts, as fractions of the fault phase. */
  restartsAt: readonly number[];
  /** Progress notifications per call. */
  steps: number;
  /** The Client's per-call timeout (ms). */
  callTimeoutMs: number;
  /** A call not settled this long after it began is hung (ms): well past the Client's bound. */
  hungMs: number;
  /** After the faults stop: how long to wait before asking each transport for a call again (ms). */
  quietMs: number;
  /** Tries of the liveness probe after the quiet time, one call each, 1 s apart. */
  probes: number;
}

const profiles: Record<Profile['name'], Profile> = {
  short: {
    name: 'short',
    calls: 240,
    inFlight: 16,
    faultMs: 5_000,
    restartsAt: [0.5],
    steps: 5,
    callTimeoutMs: 8_000,
    hungMs: 15_000,
    quietMs: 1_500,
    probes: 3,
  },
  full: {
    name: 'full',
    calls: 2_000,
    inFlight: 16,
    faultMs: 30_000,
    restartsAt: [0.35, 0.7],
    steps: 5,
    callTimeoutMs: 10_000,
    hungMs: 20_000,
    quietMs: 2_000,
    probes: 5,
  },
};

function parseArgs(argv: readonly string[]): { profile: Profile; seeds: number[]; write: boolean } {
  const short = argv.includes('--short');
  const valueOf = (flag: string) => {
    const index = argv.indexOf(flag);
    return index === -1 ? undefined : argv[index + 1];
  };
  const listed = valueOf('--seeds') ?? valueOf('--seed') ?? process.env.SOAK_SEED;
  const seeds = listed === undefined ? (short ? [1] : [1, 2, 3]) : listed.split(',').map((s) => Number(s.trim()));
  if (seeds.some((seed) => !Number.isInteger(seed))) throw new Error(`soak: seeds must be integers, got ${String(listed)}`);
  return { profile: profiles[short ? 'short' : 'full'], seeds, write: !short && !argv.includes('--no-write') };
}

/** mulberry32: a small seedable PRNG. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------
// The TCP fault proxy

type Fault =
  | { kind: 'pass' }
  | { kind: 'refuse' }
  | { kind: 'reset'; afterBytes: number }
  | { kind: 'cut'; afterBytes: number }
  | { kind: 'stall'; afterBytes: number; ms: number };

interface FaultCounts {
  connections: number;
  refused: number;
  resets: number;
  cuts: number;
  stalls: number;
  /** Connections the proxy could not forward: the backend was down (restarting). */
  backendDown: number;
}

/**
 * Forwards TCP to the backend port; while `faults` is on, each new connection draws one fault from
 * the seeded stream: refused (reset at once, before a byte reaches the server), reset or cut (FIN)
 * after N bytes of the server's answer, or stalled for a while after N bytes. A fault that comes due
 * after the faults stopped is not applied.
 */
class TcpFaultProxy {
  faults = false;
  readonly counts: FaultCounts = { connections: 0, refused: 0, resets: 0, cuts: 0, stalls: 0, backendDown: 0 };
  private readonly server: NetServer;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  port = 0;

  constructor(
    private readonly backendPort: () => number,
    private readonly random: () => number,
  ) {
    this.server = createNetServer((client) => {
      this.accept(client);
    });
  }

  async listen(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(0, '127.0.0.1', () => {
        resolve();
      });
    });
    const address = this.server.address();
    if (address === null || typeof address === 'string') throw new Error('soak: the proxy has no port');
    this.port = address.port;
  }

  private decide(): Fault {
    const dice = this.random();
    const afterBytes = Math.floor(this.random() * 3_000);
    if (dice < 0.05) return { kind: 'refuse' };
    if (dice < 0.12) return { kind: 'reset', afterBytes };
    if (dice < 0.19) return { kind: 'cut', afterBytes };
    if (dice < 0.24) return { kind: 'stall', afterBytes, ms: 300 + Math.floor(this.random() * 2_500) };
    return { kind: 'pass' };
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
  }

  private accept(client: Socket): void {
    this.counts.connections++;
    this.track(client);
    const fault = this.faults ? this.decide() : ({ kind: 'pass' } as const);
    if (fault.kind === 'refuse') {
      this.counts.refused++;
      client.resetAndDestroy();
      return;
    }
    const upstream = netConnect({ host: '127.0.0.1', port: this.backendPort() });
    this.track(upstream);
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ECONNREFUSED') this.counts.backendDown++;
      client.resetAndDestroy();
    });
    client.on('error', () => upstream.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    client.pipe(upstream);
    let seen = 0;
    let pending = fault.kind === 'pass' ? undefined : fault;
    upstream.on('data', (chunk: Buffer) => {
      if (pending === undefined || seen + chunk.length <= pending.afterBytes) {
        seen += chunk.length;
        client.write(chunk);
        return;
      }
      const fault = pending;
      pending = undefined;
      const head = chunk.subarray(0, Math.max(fault.afterBytes - seen, 0));
      const tail = chunk.subarray(head.length);
      seen += chunk.length;
      if (!this.faults) {
        client.write(chunk);
        return;
      }
      if (head.length > 0) client.write(head);
      if (fault.kind === 'reset') {
        this.counts.resets++;
        client.resetAndDestroy();
        upstream.destroy();
      } else if (fault.kind === 'cut') {
        this.counts.cuts++;
        client.end();
        upstream.destroy();
      } else {
        this.counts.stalls++;
        upstream.pause();
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          if (!client.destroyed) client.write(tail);
          upstream.resume();
        }, fault.ms);
        this.timers.add(timer);
      }
    });
  }

  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => {
      this.server.close(() => {
        resolve();
      });
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Backends: started, stopped and started again on the same port

interface Backend {
  port: number;
  restart(downMs: number): Promise<void>;
  close(): Promise<void>;
}

/** Each execution of the tool has its own name, carried in every progress notification's `message`. */
let executions = 0;

/**
 * The soak tool (both eras): `steps` progress notifications, `pauseMs` apart, each naming this
 * execution of the tool (`message`), then the tag back. A request the client sends again (F3's
 * re-send after a lost session, E5's re-issue) runs again under a new name, so its notifications
 * are told apart from notifications delivered twice.
 */
async function soakTool(
  args: { steps: number; pauseMs: number; tag: string },
  notify: (params: { progressToken: string | number; progress: number; total: number; message: string }) => Promise<void>,
  token: string | number | undefined,
  signal: AbortSignal,
): Promise<{ content: { type: 'text'; text: string }[] }> {
  const run = `${args.tag}@${String(++executions)}`;
  for (let i = 1; i <= args.steps; i++) {
    if (args.pauseMs > 0) await sleep(args.pauseMs);
    if (signal.aborted) break;
    if (token !== undefined) await notify({ progressToken: token, progress: i, total: args.steps, message: run });
  }
  return { content: [{ type: 'text', text: `done ${String(args.steps)} ${args.tag}` }] };
}

const soakInput = { steps: z.number().int(), pauseMs: z.number().int(), tag: z.string() };

/** The 1.x SDK server, stateful, SSE answers, an event store that replays every stream in order (the standalone one too). */
async function legacyBackend(): Promise<Backend> {
  const start = async (port?: number) => {
    const sessions = new Map<string, StreamableHTTPServerTransport>();
    const servers: McpServer[] = [];
    const http = fetchServer(async (req, res, _bytes, fields) => {
      const header = req.headers['mcp-session-id'];
      const sessionId = Array.isArray(header) ? header[0] : header;
      if (sessionId !== undefined) {
        const transport = sessions.get(sessionId);
        if (transport === undefined) {
          res.writeHead(404, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null }));
          return;
        }
        await transport.handleRequest(req, res, fields.body);
        return;
      }
      if (rpcMethodOf(fields.body) !== 'initialize') {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'No session' }, id: null }));
        return;
      }
      const server = new McpServer({ name: 'soak', version: '1.0.0' });
      server.registerTool('soak', { description: 'progress, then the tag', inputSchema: soakInput }, (args, extra) =>
        soakTool(
          args,
          (params) => extra.sendNotification({ method: 'notifications/progress', params }),
          extra._meta?.progressToken,
          extra.signal,
        ),
      );
      servers.push(server);
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        eventStore: new OrderedEventStore(),
        onsessioninitialized: (id) => {
          sessions.set(id, transport);
        },
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, fields.body);
    });
    const bound = await listenLocal(http, port);
    return {
      port: bound,
      async stop() {
        for (const transport of sessions.values()) await transport.close();
        for (const server of servers) await server.close();
        await shutDown(http);
      },
    };
  };
  let running: Awaited<ReturnType<typeof start>> | undefined = await start();
  const port = running.port;
  const stop = async () => {
    const was = running;
    running = undefined;
    await was?.stop();
  };
  return {
    port,
    async restart(downMs) {
      await stop();
      await sleep(downMs);
      running = await start(port);
    },
    close: stop,
  };
}

/** The v2 SDK's createMcpHandler (2026-07-28), every answer an event stream. */
async function modernBackend(): Promise<Backend> {
  const build = () => {
    const server = new McpServerV2({ name: 'soak', version: '1.0.0' });
    server.registerTool('soak', { description: 'progress, then the tag', inputSchema: z.object(soakInput) }, (args, ctx) =>
      soakTool(
        args,
        (params) => ctx.mcpReq.notify({ method: 'notifications/progress', params }),
        ctx.mcpReq._meta?.progressToken,
        ctx.mcpReq.signal,
      ),
    );
    return server;
  };
  const start = async (port?: number): Promise<{ http: Server; handler: McpHttpHandler; port: number }> => {
    const handler = createMcpHandler(build, { responseMode: 'sse' });
    const http = fetchServer(async (req, res, bytes) => {
      await serveFetch((request) => handler.fetch(request), req, res, bytes);
    });
    return { http, handler, port: await listenLocal(http, port) };
  };
  let running: Awaited<ReturnType<typeof start>> | undefined = await start();
  const port = running.port;
  const stop = async () => {
    if (running === undefined) return;
    const { handler, http } = running;
    running = undefined;
    await handler.close();
    await shutDown(http);
  };
  return {
    port,
    async restart(downMs) {
      await stop();
      await sleep(downMs);
      running = await start(port);
    },
    close: stop,
  };
}

// ---------------------------------------------------------------------------------------------
// Clients

type Era = '2025-11-25' | '2026-07-28';
type Kind = 'this' | 'sdk';

interface LaneClient {
  call(args: Record<string, unknown>, onprogress: (progress: number, run: string) => void): Promise<unknown>;
  close(): Promise<void>;
  /** This transport's public status at the end ('' for the SDK's). */
  status(): string;
}

function laneClient(era: Era, kind: Kind, url: URL, timeout: number): { client: LaneClient; connect: () => Promise<void> } {
  if (era === '2025-11-25') {
    const ours = kind === 'this' ? new StreamableHTTPClientTransport(url) : undefined;
    const transport = ours ?? new SdkTransport(url);
    const client = new Client({ name: 'soak', version: '1.0.0' }, { capabilities: {} });
    client.onerror = () => undefined;
    return {
      connect: () => client.connect(transport),
      client: {
        call: (args, onprogress) =>
          client.callTool({ name: 'soak', arguments: args }, undefined, {
            timeout,
            onprogress: (p) => {
              onprogress(p.progress, p.message ?? '');
            },
          }),
        close: () => client.close(),
        status: () => (ours === undefined ? '' : connectionStatus(ours.actor.getSnapshot())),
      },
    };
  }
  const ours = kind === 'this' ? new StreamableHTTPClientTransport(url) : undefined;
  const transport = ours ?? new SdkTransportV2(url);
  const client = new ClientV2({ name: 'soak', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  client.onerror = () => undefined;
  return {
    connect: () => client.connect(transport),
    client: {
      call: (args, onprogress) =>
        client.callTool(
          { name: 'soak', arguments: args },
          {
            timeout,
            onprogress: (p) => {
              onprogress(p.progress, p.message ?? '');
            },
          },
        ),
      close: () => client.close(),
      status: () => (ours === undefined ? '' : connectionStatus(ours.actor.getSnapshot())),
    },
  };
}

// ---------------------------------------------------------------------------------------------
// One lane

interface LaneResult {
  seed: number;
  era: Era;
  kind: Kind;
  calls: number;
  answered: number;
  failedTyped: number;
  failedUntyped: number;
  timedOut: number;
  hung: number;
  wrong: number;
  notesDelivered: number;
  notesLostAnswered: number;
  notesLostFailed: number;
  notesDuplicated: number;
  /** Calls the server ran more than once (a re-sent request: F3, E5), seen by their notifications. */
  reRunCalls: number;
  dead: number;
  /** This transport's status at the end, what the liveness probe saw. */
  endStatus: string;
  probe: string;
  heapBeforeMb: number;
  heapAfterMb: number;
  faults: FaultCounts;
  restarts: number;
  seconds: number;
  /** A few distinct failure messages, for the report. */
  failures: string[];
}

const gc = (): void => {
  (globalThis as { gc?: () => void }).gc?.();
};
const heapMb = (): number => {
  gc();
  gc();
  return Math.round((process.memoryUsage().heapUsed / 1_048_576) * 10) / 10;
};

function isTimeout(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return code === -32001 || code === 'REQUEST_TIMEOUT' || /timed? ?out/i.test(error.message);
}

/** A failure a caller can act on: an SDK error (McpError/SdkError with its code), this package's, or the SDK transport's HTTP error; not a bare network error. */
function isTyped(error: unknown): boolean {
  if (error instanceof McpTransportError) return true;
  if (!(error instanceof Error) || error instanceof TypeError) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return false;
  return code !== undefined;
}

async function runLane(profile: Profile, seed: number, era: Era, kind: Kind): Promise<LaneResult> {
  const heapBeforeMb = heapMb();
  const started = performance.now();
  // The same stream of decisions for both lanes of an era: the seed and the era, not the transport.
  const eraSalt = era === '2025-11-25' ? 0x2025 : 0x2026;
  const faultRandom = mulberry32(seed ^ eraSalt);
  const planRandom = mulberry32((seed * 31) ^ eraSalt);
  const backend = era === '2025-11-25' ? await legacyBackend() : await modernBackend();
  const proxy = new TcpFaultProxy(() => backend.port, faultRandom);
  await proxy.listen();
  const url = new URL(`http://127.0.0.1:${String(proxy.port)}/mcp`);
  const { client, connect } = laneClient(era, kind, url, profile.callTimeoutMs);

  // The calls, drawn before the run: the same for both lanes of an era.
  const plan = Array.from({ length: profile.calls }, (_, index) => {
    const pause = Math.floor(planRandom() * 40);
    return { steps: profile.steps, pauseMs: pause, tag: `#${String(index)}` };
  });
  const downtimes = profile.restartsAt.map(() => 300 + Math.floor(planRandom() * 1_200));

  const result: LaneResult = {
    seed,
    era,
    kind,
    calls: 0,
    answered: 0,
    failedTyped: 0,
    failedUntyped: 0,
    timedOut: 0,
    hung: 0,
    wrong: 0,
    notesDelivered: 0,
    notesLostAnswered: 0,
    notesLostFailed: 0,
    notesDuplicated: 0,
    reRunCalls: 0,
    dead: 0,
    endStatus: '',
    probe: '',
    heapBeforeMb,
    heapAfterMb: 0,
    faults: proxy.counts,
    restarts: 0,
    seconds: 0,
    failures: [],
  };
  const noteFailure = (error: unknown) => {
    const text = (error instanceof Error ? `${error.name}: ${error.message}` : String(error)).slice(0, 160);
    if (result.failures.length < 6 && !result.failures.includes(text)) result.failures.push(text);
  };

  /** One call, bounded: settled by the Client's timeout, else counted hung at `hungMs`. */
  const oneCall = async (index: number, args: Record<string, unknown>): Promise<'answered' | 'failed'> => {
    /** Progress values per execution of the tool (a re-sent request runs again under a new name). */
    const runs = new Map<string, number[]>();
    let timer: NodeJS.Timeout | undefined;
    const hung = new Promise<'hung'>((resolve) => {
      timer = setTimeout(() => {
        resolve('hung');
      }, profile.hungMs);
    });
    const call = client
      .call(args, (p, run) => {
        const values = runs.get(run) ?? [];
        values.push(p);
        runs.set(run, values);
      })
      .then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      );
    const settled = await Promise.race([call, hung]);
    clearTimeout(timer);
    result.calls++;
    // Delivered twice: the same notification (execution and step) more than once. A second execution's
    // notifications are its own (the server ran the request again): counted as a re-run, not a duplicate.
    let fullest = 0;
    for (const values of runs.values()) {
      const unique = new Set(values);
      result.notesDelivered += unique.size;
      result.notesDuplicated += values.length - unique.size;
      fullest = Math.max(fullest, unique.size);
    }
    if (runs.size > 1) result.reRunCalls++;
    if (settled === 'hung') {
      result.hung++;
      result.notesLostFailed += profile.steps - fullest;
      return 'failed';
    }
    if (settled.ok) {
      result.answered++;
      result.notesLostAnswered += profile.steps - fullest;
      if (!JSON.stringify(settled.value).includes(`done ${String(profile.steps)} #${String(index)}"`)) result.wrong++;
      return 'answered';
    }
    result.notesLostFailed += profile.steps - fullest;
    noteFailure(settled.error);
    if (isTimeout(settled.error)) result.timedOut++;
    else if (isTyped(settled.error)) result.failedTyped++;
    else result.failedUntyped++;
    return 'failed';
  };

  try {
    await connect();
    proxy.faults = true;
    const faultEnd = performance.now() + profile.faultMs;
    const restarts = (async () => {
      for (const [i, at] of profile.restartsAt.entries()) {
        const wait = started + profile.faultMs * at - performance.now();
        if (wait > 0) await sleep(wait);
        await backend.restart(downtimes[i] ?? 500);
        result.restarts++;
      }
    })();
    let next = 0;
    const worker = async () => {
      while (next < plan.length && performance.now() < faultEnd) {
        const index = next++;
        await oneCall(index, plan[index] ?? {});
      }
    };
    await Promise.all(Array.from({ length: profile.inFlight }, worker));
    await restarts;
    proxy.faults = false;

    // The faults have stopped and the server is up: can the transport answer a call again?
    await sleep(profile.quietMs);
    const probes: string[] = [];
    let alive = false;
    for (let i = 0; i < profile.probes && !alive; i++) {
      const args = { steps: 1, pauseMs: 0, tag: `probe${String(i)}` };
      try {
        const answer = await Promise.race([
          client.call(args, () => undefined),
          sleep(profile.hungMs).then(() => {
            throw new Error('probe hung');
          }),
        ]);
        alive = answer !== undefined;
        probes.push('answered');
      } catch (error) {
        probes.push(error instanceof Error ? error.message.slice(0, 80) : String(error));
        await sleep(1_000);
      }
    }
    result.dead = alive ? 0 : 1;
    result.probe = probes.join(' | ');
    result.endStatus = client.status();
  } finally {
    proxy.faults = false;
    await Promise.race([client.close().catch(() => undefined), sleep(5_000)]);
    await proxy.close();
    await backend.close();
  }
  result.seconds = Math.round((performance.now() - started) / 100) / 10;
  result.heapAfterMb = heapMb();
  return result;
}

// ---------------------------------------------------------------------------------------------
// Report

const laneName = (r: LaneResult) =>
  `${r.era} ${r.kind === 'this' ? 'this transport' : r.era === '2025-11-25' ? 'SDK 1.x transport' : 'SDK v2 transport'}`;

function table(results: readonly LaneResult[]): string {
  const head =
    '| seed | era, transport | calls | answered | failed typed | failed untyped | timed out | hung | wrong | notes delivered | lost (answered) | lost (failed calls) | duplicated | calls run twice by the server | dead transport | heap before → after (MB) | faults (refused/reset/cut/stall, backend down) | s |';
  const rule = `|${'---|'.repeat(18)}`;
  const rows = results.map((r) =>
    [
      r.seed,
      laneName(r),
      r.calls,
      r.answered,
      r.failedTyped,
      r.failedUntyped,
      r.timedOut,
      r.hung,
      r.wrong,
      r.notesDelivered,
      r.notesLostAnswered,
      r.notesLostFailed,
      r.notesDuplicated,
      r.reRunCalls,
      r.dead === 0 ? 'no' : `**yes**${r.endStatus === '' ? '' : ` (${r.endStatus})`}`,
      `${String(r.heapBeforeMb)} → ${String(r.heapAfterMb)}`,
      `${String(r.faults.refused)}/${String(r.faults.resets)}/${String(r.faults.cuts)}/${String(r.faults.stalls)}, ${String(r.faults.backendDown)}`,
      r.seconds,
    ].join(' | '),
  );
  return [head, rule, ...rows.map((row) => `| ${row} |`)].join('\n');
}

function failuresOf(results: readonly LaneResult[]): string {
  return results
    .map(
      (r) =>
        `- seed ${String(r.seed)}, ${laneName(r)}: probe after the faults: ${r.probe || '—'}${r.endStatus === '' ? '' : `; status at the end: ${r.endStatus}`}` +
        (r.failures.length === 0 ? '' : `\n${r.failures.map((f) => `  - \`${f.replace(/`/g, "'")}\``).join('\n')}`),
    )
    .join('\n');
}

const { profile, seeds, write } = parseArgs(process.argv.slice(2));
const lanes: readonly [Era, Kind][] = [
  ['2025-11-25', 'this'],
  ['2025-11-25', 'sdk'],
  ['2026-07-28', 'this'],
  ['2026-07-28', 'sdk'],
];
const results: LaneResult[] = [];
for (const seed of seeds) {
  for (const [era, kind] of lanes) {
    const result = await runLane(profile, seed, era, kind);
    results.push(result);
    console.log(
      `seed ${String(seed)} ${laneName(result)}: ${String(result.calls)} calls, ${String(result.answered)} answered, ` +
        `${String(result.failedTyped)} failed typed, ${String(result.failedUntyped)} untyped, ${String(result.timedOut)} timed out, ` +
        `${String(result.hung)} hung; notes ${String(result.notesDelivered)} delivered, ${String(result.notesDuplicated)} duplicated, ${String(result.reRunCalls)} calls run twice; ` +
        `dead: ${result.dead === 0 ? 'no' : 'YES'}; ${String(result.seconds)} s`,
    );
  }
}
const report = table(results);
console.log(`\n${report}\n\n${failuresOf(results)}`);
if (write) {
  const body = [
    '# Fault soak (`npm run soak`)',
    '',
    `Profile \`${profile.name}\`: up to ${String(profile.calls)} calls per lane, ${String(profile.inFlight)} in flight, ${String(profile.faultMs / 1000)} s of faults, backend restarts at ${profile.restartsAt.map((f) => `${String(Math.round(f * 100))} %`).join(' and ')} of it, ${String(profile.steps)} progress notifications per call, the Client's timeout ${String(profile.callTimeoutMs / 1000)} s, hung past ${String(profile.hungMs / 1000)} s. Seeds: ${seeds.join(', ')}. Node ${process.version}, ${new Date().toISOString()}.`,
    '',
    'How to read it: bench/README.md, "Fault soak". "Dead transport": after the faults stopped and the server was up, the transport answered none of the probe calls.',
    '',
    report,
    '',
    '## Probes and the first distinct failures per lane',
    '',
    failuresOf(results),
    '',
  ].join('\n');
  writeFileSync(new URL('./results/soak.md', import.meta.url), body);
  console.log('wrote bench/results/soak.md');
}
// CI: this transport must leave no call hung, deliver no notification twice, and be alive after the faults.
const ours = results.filter((r) => r.kind === 'this');
const bad = ours.filter((r) => r.hung > 0 || r.notesDuplicated > 0 || r.dead > 0 || r.wrong > 0);
if (bad.length > 0) {
  console.error(
    `soak: this transport: ${bad.map((r) => `seed ${String(r.seed)} ${r.era}: ${String(r.hung)} hung, ${String(r.notesDuplicated)} duplicated, ${String(r.wrong)} wrong, dead ${r.dead === 0 ? 'no' : 'yes'}`).join('; ')}`,
  );
  process.exitCode = 1;
}
