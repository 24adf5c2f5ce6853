/**
 * `mcp-xstate-transport <url>`: connect, show the chart live, list what the server offers,
 * optionally call a tool or watch, and close with DELETE.
 */
import type { InspectionEvent } from 'xstate';
import { createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { createJsonlRecorder } from '../recorder.js';
import { connectionEra, StreamableHTTPClientTransport } from '../../node.js';
import type { CliOptions } from './args.js';
import { watchChart } from './chart.js';
import { attachToView } from '../view/bridge.js';
import { InspectorPortError, inspectLive, MissingPeerError, type LiveInspection } from '../live.js';
import { serveView } from '../view/server.js';
import { classify, describeError, exitCodes, StepTimeoutError, UserFacingError } from './failure.js';
import { CliSession, RpcError } from './session.js';
import { isRecord } from '../../record.js';

/** Where every line goes: text for people, or one JSON object per line with `--json`. */
export class Output {
  private readonly started = performance.now();
  /** N5: a progress line is on the terminal, not yet ended by a newline. */
  private liveOpen = false;
  /** N5: on a terminal (and not --json), progress is one line redrawn in place. */
  readonly tty: boolean;

  constructor(private readonly json: boolean) {
    this.tty = !json && process.stdout.isTTY;
  }

  ms(): number {
    return Math.round(performance.now() - this.started);
  }

  private stamp(topic: string): string {
    return `[${String(this.ms()).padStart(5)} ms] ${topic.padEnd(10)}`;
  }

  /** Ends the live progress line (keeping it), so the next line starts below it. */
  private endLive(): void {
    if (!this.liveOpen) return;
    process.stdout.write('\n');
    this.liveOpen = false;
  }

  /** A timestamped event: `[   12 ms] topic      text`, or `{"event":topic,"ms":12,...data}`. */
  event(topic: string, text: string, data: Record<string, unknown> = {}): void {
    this.endLive();
    if (this.json) console.log(JSON.stringify({ event: topic, ms: this.ms(), ...data }));
    else console.log(`${this.stamp(topic)} ${text}`);
  }

  /** A block of text (a listing); in JSON mode the data alone. */
  block(topic: string, lines: string[], data: Record<string, unknown>): void {
    this.endLive();
    if (this.json) console.log(JSON.stringify({ event: topic, ms: this.ms(), ...data }));
    else for (const line of lines) console.log(line);
  }

  /** Progress while waiting: on stderr for people (so stdout stays the transcript), skipped in JSON. */
  progress(text: string): void {
    this.endLive();
    if (!this.json) console.error(`${this.stamp('…')} ${text}`);
  }

  /** N5: a line redrawn in place on a terminal (carriage return, erase to the end of the line). */
  live(topic: string, text: string): void {
    process.stdout.write(`\r\x1b[K${this.stamp(topic)} ${text}`);
    this.liveOpen = true;
  }

  /** Ends the live line at the end of the run. */
  done(): void {
    this.endLive();
  }
}

/** N5: `3/5 (60%) message`: a progress notification's numbers and message. */
export function progressText(params: Record<string, unknown>): string {
  const progress = typeof params.progress === 'number' ? params.progress : undefined;
  const total = typeof params.total === 'number' && params.total > 0 ? params.total : undefined;
  const message = typeof params.message === 'string' ? ` ${params.message}` : '';
  if (progress === undefined) return message.trim();
  return total === undefined ? `${progress}${message}` : `${progress}/${total} (${Math.round((progress / total) * 100)}%)${message}`;
}

/** N5: a bar for the live line, when the total is known: `[######......]`. */
function bar(params: Record<string, unknown>): string {
  const { progress, total } = params;
  if (typeof progress !== 'number' || typeof total !== 'number' || total <= 0) return '';
  const filled = Math.max(0, Math.min(20, Math.round((progress / total) * 20)));
  return `[${'#'.repeat(filled)}${'.'.repeat(20 - filled)}] `;
}

/**
 * N5: the progress of the tool call running now: a live line on a terminal, a line per
 * notification otherwise, and what the "still waiting" line says about it.
 */
class CallProgress {
  private token: string | undefined;
  private tool = '';
  private lastText: string | undefined;
  private lastParams: Record<string, unknown> = {};

  constructor(private readonly out: Output) {}

  /** A new token for a call of `tool`; its notifications are shown from now on. */
  begin(tool: string, token: string): void {
    this.token = token;
    this.tool = tool;
    this.lastText = undefined;
  }

  end(): void {
    this.token = undefined;
    this.out.done();
  }

  /** Takes a `notifications/progress` for the running call; false when it is someone else's. */
  take(params: Record<string, unknown>): boolean {
    if (this.token === undefined || params.progressToken !== this.token) return false;
    this.lastText = progressText(params);
    this.lastParams = params;
    if (this.out.tty) this.out.live('progress', `${this.tool} ${bar(params)}${this.lastText}`);
    else this.out.event('progress', `${this.tool} ${this.lastText}`, { tool: this.tool, ...params });
    return true;
  }

  /**
   * The ticker's turn (every 2 s): on a terminal the live line is redrawn with the time (drawn);
   * otherwise the last progress, for the "still waiting" line.
   */
  tick(seconds: number): { drawn: true } | { drawn: false; text: string | undefined } {
    if (this.token === undefined || this.lastText === undefined) return { drawn: false, text: undefined };
    if (this.out.tty) {
      this.out.live('progress', `${this.tool} ${bar(this.lastParams)}${this.lastText}  (${seconds} s)`);
      return { drawn: true };
    }
    return { drawn: false, text: `progress ${this.lastText}` };
  }
}

/**
 * Waits for `promise`, printing a line every 2 s (with the call's progress when it has some,
 * N5), failing after `timeoutMs`.
 */
async function step<T>(
  out: Output,
  what: string,
  promise: Promise<T>,
  timeoutMs: number,
  state: () => string,
  progress?: CallProgress,
): Promise<T> {
  const began = performance.now();
  const ticker = setInterval(() => {
    const seconds = Math.round((performance.now() - began) / 1000);
    const shown = progress?.tick(seconds);
    if (shown?.drawn === true) return;
    const known = shown?.text === undefined ? '' : `${shown.text}; `;
    out.progress(`still waiting for ${what} (${seconds} s; ${known}${state()})`);
  }, 2_000);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new StepTimeoutError(`${what}: no answer within ${timeoutMs / 1000} s (${state()})`));
    }, timeoutMs);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearInterval(ticker);
    clearTimeout(timer);
  }
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** `  name  description` lines of a listing, the description cut to one line. */
function listing(title: string, items: Record<string, unknown>[], name: (item: Record<string, unknown>) => string): string[] {
  const names = items.map(name);
  const width = Math.min(32, Math.max(0, ...names.map((n) => n.length)));
  return [
    `${title} (${items.length})`,
    ...items.map((item, i) => {
      const description = text(item.description).split('\n')[0] ?? '';
      return `  ${(names[i] ?? '').padEnd(width)}  ${description.length > 80 ? `${description.slice(0, 79)}…` : description}`.trimEnd();
    }),
  ];
}

function capabilityOf(result: Record<string, unknown>, name: string): boolean {
  const capabilities = result.capabilities;
  return typeof capabilities === 'object' && capabilities !== null && name in capabilities;
}

/** N5: the list changes a `subscriptions/listen` asks for: those the server says it announces. */
function listenFor(result: Record<string, unknown>): Record<string, boolean> {
  const capabilities = isRecord(result.capabilities) ? result.capabilities : {};
  const announces = (name: string) => {
    const capability = capabilities[name];
    return isRecord(capability) && capability.listChanged === true;
  };
  return {
    ...(announces('tools') ? { toolsListChanged: true } : {}),
    ...(announces('prompts') ? { promptsListChanged: true } : {}),
    ...(announces('resources') ? { resourcesListChanged: true } : {}),
  };
}

function contentText(result: Record<string, unknown>): string {
  const content = Array.isArray(result.content) ? (result.content as Record<string, unknown>[]) : [];
  return content.map((item) => (item.type === 'text' ? text(item.text) : `(${text(item.type)})`)).join('\n');
}

/** JSON-RPC "invalid params", which servers answer for a tool they do not have. */
const invalidParams = -32602;

/**
 * U7: whether a call's failure says the tool does not exist: -32602 ("invalid params") as a
 * JSON-RPC error or as the text of an error result (the SDK's servers answer the latter), naming
 * the tool as not found or unknown, or for a tool the server did not list. Invalid arguments of a
 * tool that exists are -32602 too, and stay the tool's error.
 */
function unknownTool(tool: string, listed: readonly string[] | undefined, failure: { code?: number; text: string }): boolean {
  const said = failure.code === invalidParams || failure.text.includes(String(invalidParams));
  if (!said) return false;
  if (listed !== undefined) return !listed.includes(tool);
  return /\b(not found|unknown tool|no such tool)\b/i.test(failure.text);
}

/** U7: "no such tool" with what the server does offer; exit 2, the command line named it. */
function noSuchTool(tool: string, listed: readonly string[] | undefined): UserFacingError {
  const offered =
    listed === undefined
      ? 'the server did not list its tools'
      : listed.length === 0
        ? 'the server offers no tools'
        : `its tools: ${listed.join(', ')}`;
  return new UserFacingError(`no such tool: '${tool}'; ${offered}`, exitCodes.usage);
}

/** Resolves at the first Ctrl-C (SIGINT) or SIGTERM; a second one ends the process at once. */
function interrupted(): Promise<void> {
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      process.once('SIGINT', () => process.exit(130));
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

export async function connect(options: CliOptions): Promise<number> {
  const out = new Output(options.json);
  let record: WriteStream | undefined;
  if (options.record !== undefined) {
    record = createWriteStream(options.record);
    await once(record, 'open');
  }
  // U10: with --inspect the chart view runs too: the inspector page links it for when the hosted inspector cannot be reached.
  const view = options.view || options.inspect !== undefined ? await serveView() : undefined;
  let live: LiveInspection | undefined;
  try {
    live = options.inspect === undefined ? undefined : await inspectLive({ port: options.inspect, chartViewUrl: view?.url });
  } catch (error) {
    await view?.close();
    record?.end();
    // U10, U11: a busy port or a missing peer is the user's to fix: one line, exit 9.
    if (error instanceof InspectorPortError || error instanceof MissingPeerError)
      throw new UserFacingError(error.message, exitCodes.unavailable);
    throw error;
  }
  const recorder = record === undefined ? undefined : createJsonlRecorder((line) => record.write(`${line}\n`));
  const observers = [recorder, live?.inspect].filter((o) => o !== undefined);
  const transport = new StreamableHTTPClientTransport(new URL(options.url), {
    requestInit: { headers: options.headers },
    ...(observers.length === 0
      ? {}
      : {
          inspect: (event: InspectionEvent) => {
            for (const observer of observers) observer.next?.(event);
          },
        }),
  });
  if (live !== undefined) out.event('inspect', `Stately inspector at ${live.url} (session IDs and tokens redacted)`, { url: live.url });
  const bridge = view === undefined ? undefined : attachToView(transport, view.url);
  if (view !== undefined) out.event('view', `chart view at ${view.url.href}`, { url: view.url.href });
  const chart = watchChart(transport, (line) => {
    out.event(line.chart, `${line.text}${line.previousMs > 0 ? `  (+${line.previousMs} ms)` : ''}`, {
      state: line.state,
      tags: line.tags,
      previousMs: line.previousMs,
    });
  });
  // The error the chart failed with carries the whole cause chain (the synthetic JSON-RPC answer
  // to initialize only its message): it decides the exit code, and is not repeated as a warning.
  let chartFailure: Error | undefined;
  transport.actor.on('failed', ({ error }) => {
    chartFailure = error;
  });
  const warn = (error: Error) => {
    out.event('warning', describeError(error), { message: describeError(error) });
  };
  // U11: warnings before the connection stands are held: one that is part of the failure is said once, in its line.
  let held: Error[] | undefined = [];
  transport.onerror = (error) => {
    queueMicrotask(() => {
      if (error === chartFailure) return;
      if (held === undefined) warn(error);
      else held.push(error);
    });
  };
  const releaseWarnings = (failure?: unknown) => {
    const causes = new Set<unknown>();
    for (let e: unknown = failure; e !== undefined && causes.size < 8; e = e instanceof Error ? e.cause : undefined) causes.add(e);
    for (const error of held ?? []) if (!causes.has(error)) warn(error);
    held = undefined;
  };
  const progress = new CallProgress(out);
  const session = new CliSession(transport, (notification) => {
    if (notification.method === 'notifications/progress' && notification.params !== undefined && progress.take(notification.params)) return;
    const params = notification.params === undefined ? '' : JSON.stringify(notification.params);
    out.event(
      'notified',
      `${notification.method}${params === '' || params === '{}' ? '' : ` ${params.length > 200 ? `${params.slice(0, 199)}…` : params}`}`,
      {
        method: notification.method,
        params: notification.params,
      },
    );
  });
  const wait = <T>(what: string, promise: Promise<T>) => step(out, what, promise, options.timeoutMs, chart.current);

  let exitCode: number = exitCodes.ok;
  let closing = false;
  try {
    out.event('connect', options.url, { url: options.url });
    const connected = await wait('initialize', session.connect());
    releaseWarnings();
    const init = connected.result;
    const info = connected.serverInfo;
    const era = connectionEra(transport.actor.getSnapshot());
    out.event(
      'connected',
      `${text(info.name) || '?'} ${text(info.version)}, protocol ${transport.protocolVersion ?? '?'} (era: ${era ?? '?'}${era === 'modern' ? ', sessionless' : ''})`,
      {
        server: info,
        protocolVersion: transport.protocolVersion,
        era,
        capabilities: init.capabilities,
      },
    );

    const lists = [
      ['tools', 'tools/list', (item: Record<string, unknown>) => text(item.name)],
      ['resources', 'resources/list', (item: Record<string, unknown>) => text(item.uri)],
      ['prompts', 'prompts/list', (item: Record<string, unknown>) => text(item.name)],
    ] as const;
    /** The tool names the server listed (undefined: it has no tools capability). */
    let toolNames: string[] | undefined;
    for (const [key, method, name] of lists) {
      if (!capabilityOf(init, key)) {
        out.block(key, [`${key}: the server offers none`], { [key]: [] });
        if (key === 'tools') toolNames = [];
        continue;
      }
      const items = await wait(method, session.list(method, key));
      if (key === 'tools') toolNames = items.map(name);
      out.block(key, listing(key, items, name), { [key]: items });
    }

    if (options.call !== undefined) {
      const { tool, args } = options.call;
      // N5: ask for progress; the notifications that carry this token are shown as they come.
      const progressToken = `cli-${tool}-${Date.now()}`;
      progress.begin(tool, progressToken);
      let result: Record<string, unknown>;
      try {
        result = await step(
          out,
          `tools/call ${tool}`,
          session.request('tools/call', { name: tool, arguments: args, _meta: { progressToken } }),
          options.timeoutMs,
          chart.current,
          progress,
        );
      } catch (error) {
        if (error instanceof RpcError && unknownTool(tool, toolNames, { code: error.code, text: error.message })) {
          throw noSuchTool(tool, toolNames);
        }
        throw error;
      } finally {
        progress.end();
      }
      const isError = result.isError === true;
      if (isError && unknownTool(tool, toolNames, { text: contentText(result) })) throw noSuchTool(tool, toolNames);
      out.block('result', [`result of ${tool}${isError ? ' (the tool reported an error)' : ''}:`, contentText(result)], { tool, result });
      if (isError) exitCode = exitCodes.toolError;
    }

    if (options.watch) {
      if (connected.era === 'modern') {
        // N5: in 2026-07-28 change notifications come on a subscriptions/listen stream (no GET stream).
        session.request('subscriptions/listen', { notifications: listenFor(init) }).catch((error: unknown) => {
          if (!closing) out.event('warning', `subscriptions/listen: ${describeError(error)}`, { message: describeError(error) });
        });
        out.event('watching', 'subscriptions/listen: change notifications and state changes; Ctrl-C ends the stream', {});
      } else {
        out.event('watching', 'notifications and state changes; Ctrl-C closes the session');
      }
      await interrupted();
    }
  } catch (error) {
    releaseWarnings(chartFailure ?? error);
    const failure =
      error instanceof UserFacingError
        ? { kind: 'usage' as const, exitCode: error.exitCode, message: error.message }
        : classify(chartFailure ?? error, options.url);
    if (options.json) out.event('failed', failure.message, { kind: failure.kind, exitCode: failure.exitCode, message: failure.message });
    else console.error(`mcp-xstate-transport: ${failure.message}`);
    exitCode = failure.exitCode;
  } finally {
    closing = true;
    out.done();
    try {
      await step(out, 'close', transport.close(), options.timeoutMs, chart.current);
      out.event('closed', transport.sessionId === undefined ? 'the transport is closed' : 'the transport is closed', {});
    } catch (error) {
      out.event('warning', `close: ${describeError(error)}`, { message: describeError(error) });
    }
    chart.stop();
    await bridge?.close();
    live?.stop();
    if (view !== undefined && options.view && !options.watch) {
      // U7: the page outlives the session it shows (it keeps every line it was sent), until Ctrl-C.
      out.event('view', `chart view at ${view.url.href} shows this session until Ctrl-C`, { url: view.url.href, keptAlive: true });
      await interrupted();
    }
    await view?.close();
    if (record !== undefined) {
      record.end();
      await once(record, 'close');
    }
  }
  return exitCode;
}
