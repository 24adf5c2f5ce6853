/**
 * `npm start`: the official SDK's server on 127.0.0.1, the SDK Client connected through this
 * transport, and the chart's lifecycle printed as it runs. A development script: it uses the SDK
 * (a dev dependency) and its demo server (src/devtools/demo-server.ts); the published command is src/devtools/cli/main.ts.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { StreamableHTTPClientTransport } from '../src/node.js';
import { watchChart } from '../src/devtools/cli/chart.js';
import { describeError as describe } from '../src/devtools/cli/failure.js';
import { startDemoServer, type DemoServer } from '../src/devtools/demo-server.js';

/** The longest the demo may run before it gives up. */
const commandTimeoutMs = 20_000;
/** How long to wait for one step (a notification, the standalone stream) before failing. */
const stepTimeoutMs = 5_000;

const started = performance.now();

function log(topic: string, text: string): void {
  const ms = Math.round(performance.now() - started);
  console.log(`[${String(ms).padStart(5)} ms] ${topic.padEnd(10)} ${text}`);
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

function watch(transport: StreamableHTTPClientTransport) {
  return watchChart(transport, (line) => {
    log(line.chart, line.text);
  });
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

// Never hang: past the timeout the demo fails; once it is done, the process must end by itself,
// since close() leaves no request, timer or stream behind (F2). The guards are unref'd so they never
// keep the process alive themselves.
const deadline = setTimeout(() => {
  console.error(`failed: no result within ${commandTimeoutMs / 1000} s`);
  process.exit(1);
}, commandTimeoutMs);
deadline.unref();

demo().then(
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
