/**
 * A command line around the transport.
 *
 *   tsx src/cli.ts demo            starts the official SDK's server on 127.0.0.1, connects the SDK Client
 *                                  through this transport, and prints the chart's lifecycle as it runs
 *   tsx src/cli.ts connect <url>   connects to a server, lists its tools, and closes
 *   tsx src/cli.ts view [file]     serves the chart view on 127.0.0.1 (W5): live, or replaying a JSONL recording
 *
 * Not part of the published package (tsconfig.build.json leaves it out): the demo needs the SDK,
 * a dev dependency, and its demo server (src/demo-server.ts).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { inspect } from 'node:util';
import type { AnyActorRef, StateValue } from 'xstate';
import { StreamableHTTPClientTransport } from './index.js';
import { serveView } from './view/server.js';
import { startDemoServer, type DemoServer } from './demo-server.js';

/** The longest a command may run before it gives up. */
const commandTimeoutMs = 20_000;
/** How long to wait for one step (a notification, the standalone stream) before failing. */
const stepTimeoutMs = 5_000;

const started = performance.now();

function log(topic: string, text: string): void {
  const ms = Math.round(performance.now() - started);
  console.log(`[${String(ms).padStart(5)} ms] ${topic.padEnd(10)} ${text}`);
}

/** `{ open: { session: 'active', standalone: 'active' } }` → `open.session.active + open.standalone.active`. */
export function renderStateValue(value: StateValue): string {
  const leaves = (v: StateValue, prefix: string): string[] =>
    typeof v === 'string'
      ? [`${prefix}${v}`]
      : Object.entries(v).flatMap(([key, child]) =>
          child === undefined || (typeof child === 'object' && Object.keys(child).length === 0)
            ? [`${prefix}${key}`]
            : leaves(child, `${prefix}${key}.`),
        );
  return leaves(value, '').join(' + ');
}

/** Whether a rendered state (`listening.unwatched`) is in `state` (`listening`) or below it. */
function inState(rendered: string, state: string): boolean {
  return rendered.split(' + ').some((leaf) => leaf === state || leaf.startsWith(`${state}.`));
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new Error(`${what}: no result within ${ms} ms`));
    }, ms);
  });
  return Promise.race([promise, timeout]).finally(() => {
    clearTimeout(timer);
  });
}

/**
 * Prints every change of the connection chart's state (with its tags), and of the standalone
 * stream child while it runs. Returns a way to wait for the standalone stream to reach a state.
 */
function watch(transport: StreamableHTTPClientTransport) {
  let lastState = '';
  let watchedChild: AnyActorRef | undefined;
  let childState = '';
  const childWaiters: { state: string; resolve: () => void }[] = [];

  const onChild = (snapshot: unknown) => {
    const value = (snapshot as { value?: StateValue }).value;
    if (value === undefined) return;
    const rendered = renderStateValue(value);
    if (rendered === childState) return;
    childState = rendered;
    log('standalone', rendered);
    for (const waiter of childWaiters.filter((w) => inState(rendered, w.state))) {
      childWaiters.splice(childWaiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };

  const onSnapshot = () => {
    const snapshot = transport.actor.getSnapshot();
    const rendered = renderStateValue(snapshot.value);
    if (rendered !== lastState) {
      lastState = rendered;
      const tags = [...snapshot.tags].sort();
      log('state', `${rendered}${tags.length > 0 ? `  [${tags.join(', ')}]` : ''}`);
    }
    const child = (snapshot.children as Record<string, AnyActorRef | undefined>).standalone;
    if (child !== undefined && child !== watchedChild) {
      watchedChild = child;
      childState = '';
      onChild(child.getSnapshot());
      child.subscribe({ next: onChild, error: () => undefined });
    }
  };

  onSnapshot();
  transport.actor.subscribe({ next: onSnapshot, error: () => undefined });

  return {
    standalone(state: string): Promise<void> {
      if (inState(childState, state)) return Promise.resolve();
      return new Promise((resolve) => childWaiters.push({ state, resolve }));
    },
  };
}

function newClient(): Client {
  const client = new Client({ name: 'mcp-xstate-transport-cli', version: '0.1.0' }, { capabilities: {} });
  client.onerror = (error) => {
    log('warning', describe(error));
  };
  return client;
}

async function demo(): Promise<void> {
  console.log('demo: the SDK Client, through this transport, against the SDK server on 127.0.0.1');
  let server: DemoServer | undefined = await startDemoServer();
  try {
    log('server', `the SDK's McpServer listening on ${server.url.href}`);
    const transport = new StreamableHTTPClientTransport(server.url);
    const chart = watch(transport);
    const client = newClient();

    await within(client.connect(transport), stepTimeoutMs, 'connect');
    const version = client.getServerVersion();
    log('connected', `to ${version?.name ?? '?'} ${version?.version ?? ''}, protocol ${transport.protocolVersion ?? '?'}`);

    const { tools } = await within(client.listTools(), stepTimeoutMs, 'tools/list');
    log('tools', tools.map((tool) => tool.name).join(', '));

    const result = await within(
      client.callTool({ name: 'progress', arguments: { steps: 5 } }, undefined, {
        onprogress: (progress) => {
          log('progress', `${progress.progress}/${progress.total ?? '?'}`);
        },
      }),
      stepTimeoutMs,
      'tools/call progress',
    );
    const content = (result as { content?: { type: string; text?: string }[] }).content ?? [];
    log('result', content.map((item) => item.text ?? `(${item.type})`).join(' '));

    // The server speaks first: a notification on the standalone GET stream, outside any request.
    await within(chart.standalone('listening'), stepTimeoutMs, 'standalone stream');
    const received = new Promise<string>((resolve) => {
      client.setNotificationHandler(ToolListChangedNotificationSchema, (notification) => {
        resolve(notification.method);
      });
    });
    const sessionId = transport.sessionId;
    const session = sessionId === undefined ? undefined : server.sessions.get(sessionId);
    if (session === undefined) throw new Error('the server has no session for this client');
    log('server', 'sends notifications/tools/list_changed (no request open, so on the standalone GET stream)');
    session.server.sendToolListChanged();
    const method = await within(received, stepTimeoutMs, 'standalone notification');
    log('received', `${method} on the standalone GET stream`);

    await within(client.close(), stepTimeoutMs, 'close');
    log('closed', server.closedSessions.includes(sessionId ?? '') ? 'the server saw DELETE for the session' : 'the server saw no DELETE');

    await server.close();
    server = undefined;
    log('server', 'stopped');
  } finally {
    await server?.close();
  }
}

async function connect(url: string): Promise<void> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`not a URL: ${url}`);
  }
  const transport = new StreamableHTTPClientTransport(parsed);
  watch(transport);
  const client = newClient();
  try {
    await within(client.connect(transport), stepTimeoutMs, 'connect');
    const version = client.getServerVersion();
    log('connected', `to ${version?.name ?? '?'} ${version?.version ?? ''}, protocol ${transport.protocolVersion ?? '?'}`);
    if (client.getServerCapabilities()?.tools) {
      const { tools } = await within(client.listTools(), stepTimeoutMs, 'tools/list');
      log('tools', tools.length > 0 ? tools.map((tool) => tool.name).join(', ') : '(none)');
    } else {
      log('tools', 'the server offers no tools');
    }
  } finally {
    await within(client.close(), stepTimeoutMs, 'close');
    log('closed', 'the transport is closed');
  }
}

/** W5: the chart view on 127.0.0.1 until Ctrl+C; with a file, it opens that recording. */
async function view(file: string | undefined): Promise<void> {
  const recording = file === undefined ? undefined : { text: await readFile(file, 'utf8'), name: basename(file) };
  const server = await serveView(recording === undefined ? {} : { recording });
  console.log(`chart view: ${server.url.href}${recording === undefined ? ' (live: attach a transport with attachToView(transport, url))' : ` (replaying ${recording.name})`}`);
  console.log('Ctrl+C stops it.');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await server.close();
}

const usage = 'usage: tsx src/cli.ts demo | tsx src/cli.ts connect <url> | tsx src/cli.ts view [recording.jsonl]';

/** The error and its causes, outermost first. */
function describe(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error; e !== undefined && parts.length < 4; e = e instanceof Error ? e.cause : undefined) {
    parts.push(e instanceof Error ? e.message : inspect(e));
  }
  return parts.join(' ← ');
}

async function run(args: string[]): Promise<void> {
  const [command, ...rest] = args;
  if (command === 'demo' && rest.length === 0) return demo();
  if (command === 'connect' && rest.length === 1 && rest[0] !== undefined) return connect(rest[0]);
  if (command === 'view' && rest.length <= 1) {
    // The view runs until stopped: no command deadline.
    clearTimeout(deadline);
    return view(rest[0]);
  }
  console.error(usage);
  process.exitCode = 2;
}

// Never hang: past the timeout the command fails; once it is done, the process must end by itself,
// since close() leaves no request, timer or stream behind (F2). The guards are unref'd so they never
// keep the process alive themselves.
const deadline = setTimeout(() => {
  console.error(`failed: no result within ${commandTimeoutMs / 1000} s`);
  process.exit(1);
}, commandTimeoutMs);
deadline.unref();

run(process.argv.slice(2)).then(
  () => {
    clearTimeout(deadline);
    setTimeout(() => {
      console.error('failed: the process did not exit by itself after close (something is still open)');
      process.exit(1);
    }, 2_000).unref();
  },
  (error: unknown) => {
    console.error(`failed: ${describe(error)}`);
    process.exit(1);
  },
);
