/**
 * The command line, parsed: what to connect to and what to do there. U9: every value that comes
 * from the command line (the URL, `--args`, headers, numbers) goes through a `zod/mini` schema;
 * a bad one is a UsageError that names the option and the shape it wants.
 */
import * as z from 'zod/mini';

export interface CliOptions {
  url: string;
  headers: [string, string][];
  call: { tool: string; args: Record<string, unknown> } | undefined;
  /** Stay connected and print notifications (`--watch`, or `--listen`: in 2026-07-28 a `subscriptions/listen` stream). */
  watch: boolean;
  record: string | undefined;
  /** Serve the chart view on 127.0.0.1 and feed it this session live. */
  view: boolean;
  /** U8: bridge the chart live to the Stately inspector on this port (`@statelyai/inspect`). */
  inspect: number | undefined;
  json: boolean;
  /** The longest wait for one step (connect, a list, a call), in ms. */
  timeoutMs: number;
}

/** N4: `mcp-xstate-transport doctor <url>`. */
export interface DoctorOptions {
  url: string;
  headers: [string, string][];
  /** The page origin the browser checks pretend to come from. */
  origin: string;
  /** How long to watch a stream for a keep-alive, in ms. */
  keepAliveWindowMs: number;
  json: boolean;
  /** The longest wait for one probe, in ms. */
  timeoutMs: number;
}

export type Parsed = { command: 'help' } | { command: 'connect'; options: CliOptions };
export type ParsedDoctor = { command: 'help' } | { command: 'doctor'; options: DoctorOptions };

/** A mistake on the command line: the message says what to change. */
export class UsageError extends Error {}

export const usage = `usage: mcp-xstate-transport [connect] <url> [options]
       mcp-xstate-transport doctor <url> [--header 'K: V'] [--origin <origin>]
                                         [--keepalive-window <seconds>] [--timeout <seconds>] [--json]
       mcp-xstate-transport view [recording.jsonl]

Connects to an MCP server over Streamable HTTP, shows the transport's chart as it changes
(state, tags, milliseconds since start), lists the server's tools, resources and prompts,
and closes the session (DELETE).

options:
  --call <tool>        call a tool after listing; its progress notifications are shown as they
                       come (one line redrawn on a terminal, a line each otherwise)
  --args <json>        the tool's arguments, a JSON object (default {})
  --header 'K: V'      add a request header, e.g. --header 'Authorization: Bearer …' (repeatable)
  --watch              stay connected: print notifications and state changes until Ctrl-C,
                       then close the session (DELETE); in the 2026-07-28 era this opens a
                       subscriptions/listen stream for list changes
  --listen             the same as --watch (the 2026-07-28 name)
  --record <file>      write the chart's lifecycle as JSON lines (session IDs and tokens redacted)
  --view               serve the chart view on 127.0.0.1 and show this session in it live;
                       the page stays up after the session ends, until Ctrl-C
  --inspect [port]     watch the chart live in the Stately inspector (@statelyai/inspect), through a
                       bridge on 127.0.0.1 at that port (default 8080; 0 picks a free one); session
                       IDs and tokens redacted; the chart view runs too, for when the hosted
                       inspector cannot be reached
  --json               print one JSON object per line on stdout, for scripts
  --timeout <seconds>  the longest wait for one step (default 30)
  -h, --help           this text

doctor: probes the server and prints one line per check, each fault or note with its fix: the
eras and versions it speaks, the standalone GET (405 is fine, 404 or 406 is not), CORS for
pages (Mcp-Session-Id exposed), stream keep-alive and X-Accel-Buffering, cookies, redirects,
and auth discovery (WWW-Authenticate, protected-resource metadata).
  --origin <origin>    the page origin of the browser checks (default https://app.example)
  --keepalive-window <seconds>
                       how long to watch a stream for a keep-alive (default 20)

exit codes:
  0 done   1 other failure   2 bad command line, URL or tool name   3 server unreachable
  4 not an MCP server      5 the server needs authorization   6 a step timed out
  7 the called tool reported an error   8 the doctor found a fault
  9 unavailable here: the --inspect port is in use, or an optional peer is not installed`;

/** U11: what follows a usage error's one line, instead of the whole usage text. */
export const seeHelp = 'see mcp-xstate-transport --help';

// U9: the schemas. Each parses the raw text of one option; `shape` is what the error asks for.

/** RFC 9110 token: a header name. */
const headerName = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const headerSchema = z.pipe(
  z.string(),
  z.transform((text: string, ctx): [string, string] => {
    const colon = text.indexOf(':');
    const name = colon > 0 ? text.slice(0, colon).trim() : '';
    const value = text.slice(colon + 1).trim();
    if (!headerName.test(name) || /[\r\n\0]/.test(value)) {
      ctx.issues.push({ code: 'custom', message: 'bad header', input: text });
      return z.NEVER;
    }
    return [name, value];
  }),
);

const jsonText = z.transform((text: string, ctx): unknown => {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    ctx.issues.push({ code: 'custom', message: `not JSON: ${error instanceof Error ? error.message : String(error)}`, input: text });
    return z.NEVER;
  }
});

/** `--args`: JSON text whose value is an object (not an array, not null). */
const toolArgsSchema = z.pipe(z.string(), z.pipe(jsonText, z.record(z.string(), z.unknown())));

/** A number of seconds greater than 0 (`--timeout`, `--keepalive-window`), as ms. */
const secondsSchema = z.pipe(
  z.string(),
  z.pipe(
    z.transform((text: string) => (text.trim() === '' ? Number.NaN : Number(text))),
    z.pipe(
      z.number().check(z.positive()),
      z.transform((seconds: number) => Math.round(seconds * 1000)),
    ),
  ),
);

const portSchema = z.pipe(z.string().check(z.regex(/^\d+$/)), z.pipe(z.transform(Number), z.int().check(z.minimum(0), z.maximum(65_535))));

const nonEmpty = z.string().check(z.minLength(1));

/** An absolute http(s) URL; the two ways to miss get their own message. */
const urlSchema = z.string().check(
  z.refine((text) => URL.canParse(text), { error: 'not a URL' }),
  z.refine((text) => !URL.canParse(text) || ['http:', 'https:'].includes(new URL(text).protocol), { error: 'not an http(s) URL' }),
);

/** An origin for the CORS checks: scheme, host and port, no path. */
const originSchema = z.string().check(
  z.refine((text) => URL.canParse(text) && ['http:', 'https:'].includes(new URL(text).protocol) && new URL(text).origin === text, {
    error: 'not an origin',
  }),
);

/**
 * U9: parses `raw` with `schema`; a failure is a UsageError: `--timeout: expected a number of
 * seconds greater than 0, got 'abc'` (with the parser's own reason when it has one, e.g. JSON's).
 */
export function validated<T>(field: string, schema: z.ZodMiniType<T, string>, raw: string, shape: string): T {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const path = issue === undefined || issue.path.length === 0 ? '' : `.${issue.path.map(String).join('.')}`;
  const reason = issue?.code === 'custom' && issue.message.startsWith('not JSON') ? ` (${issue.message})` : '';
  return failWith(`${field}${path}: expected ${shape}, got '${raw}'${reason}`);
}

function failWith(message: string): never {
  throw new UsageError(message);
}

const shapes = {
  header: "'Name: value' (a header name, a colon, a value on one line)",
  args: 'a JSON object of the tool\'s arguments, e.g. \'{"text":"hi"}\'',
  seconds: 'a number of seconds greater than 0',
  port: 'a port number from 0 (any free one) to 65535',
  tool: 'a tool name',
  file: 'a file name',
  origin: 'an origin such as https://app.example (scheme, host and port, no path)',
} as const;

/** Checks the URL the way the transport will use it: absolute, http or https. */
export function parseUrl(text: string): URL {
  const result = urlSchema.safeParse(text);
  if (!result.success) {
    const notUrl = result.error.issues.some((issue) => issue.message === 'not a URL');
    throw new UsageError(
      notUrl
        ? `not a URL: '${text}' (expected the server's endpoint, an absolute http(s) URL, e.g. http://127.0.0.1:3000/mcp)`
        : `not an http(s) URL: '${text}' (expected http:// or https://: Streamable HTTP needs one)`,
    );
  }
  return new URL(text);
}

/** Walks `argv`, handing each option to `take` (false: an unknown option); returns the positionals, or 'help'. */
function walk(argv: string[], take: (option: string, value: () => string, peek: () => string | undefined) => boolean): string[] | 'help' {
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    if (arg === '-h' || arg === '--help') return 'help';
    if (!arg.startsWith('-') || arg === '-') {
      positional.push(arg);
      continue;
    }
    const value = (): string => {
      const next = argv[++i];
      if (next === undefined) throw new UsageError(`${arg} needs a value`);
      return next;
    };
    if (!take(arg, value, () => argv[i + 1])) throw new UsageError(`unknown option ${arg}`);
  }
  return positional;
}

function oneUrl(positional: string[]): string {
  if (positional.length === 0) throw new UsageError('no URL given');
  if (positional.length > 1) throw new UsageError(`one URL expected, got: ${positional.join(' ')}`);
  const url = positional[0] ?? '';
  parseUrl(url);
  return url;
}

export function parseArgs(argv: string[]): Parsed {
  const options: Omit<CliOptions, 'url' | 'call'> = {
    headers: [],
    watch: false,
    record: undefined,
    view: false,
    inspect: undefined,
    json: false,
    timeoutMs: 30_000,
  };
  let tool: string | undefined;
  let toolArgs: Record<string, unknown> | undefined;
  const positional = walk(argv, (arg, value, peek) => {
    switch (arg) {
      case '--call':
        tool = validated('--call', nonEmpty, value(), shapes.tool);
        return true;
      case '--args':
        toolArgs = validated('--args', toolArgsSchema, value(), shapes.args);
        return true;
      case '--header':
        options.headers.push(validated('--header', headerSchema, value(), shapes.header));
        return true;
      case '--watch':
      case '--listen':
        options.watch = true;
        return true;
      case '--record':
        options.record = validated('--record', nonEmpty, value(), shapes.file);
        return true;
      case '--view':
        options.view = true;
        return true;
      case '--inspect': {
        // An optional port: the next argument is its value unless it is an option or the URL
        // (`--inspect abc` is a bad port, not a second URL).
        const next = peek();
        const isValue = next !== undefined && !next.startsWith('-') && !/^[a-z][a-z0-9+.-]*:\/\//i.test(next);
        options.inspect = isValue ? validated('--inspect', portSchema, value(), shapes.port) : 8080;
        return true;
      }
      case '--json':
        options.json = true;
        return true;
      case '--timeout':
        options.timeoutMs = validated('--timeout', secondsSchema, value(), shapes.seconds);
        return true;
      default:
        return false;
    }
  });
  if (positional === 'help') return { command: 'help' };
  const url = oneUrl(positional);
  if (toolArgs !== undefined && tool === undefined) throw new UsageError('--args needs --call <tool>');
  return { command: 'connect', options: { ...options, url, call: tool === undefined ? undefined : { tool, args: toolArgs ?? {} } } };
}

/** N4: `doctor <url> [--header 'K: V'] [--origin <origin>] [--keepalive-window <s>] [--timeout <s>] [--json]`. */
export function parseDoctorArgs(argv: string[]): ParsedDoctor {
  const options: Omit<DoctorOptions, 'url'> = {
    headers: [],
    origin: 'https://app.example',
    keepAliveWindowMs: 20_000,
    json: false,
    timeoutMs: 30_000,
  };
  const positional = walk(argv, (arg, value) => {
    switch (arg) {
      case '--header':
        options.headers.push(validated('--header', headerSchema, value(), shapes.header));
        return true;
      case '--origin':
        options.origin = validated('--origin', originSchema, value(), shapes.origin);
        return true;
      case '--keepalive-window':
        options.keepAliveWindowMs = validated('--keepalive-window', secondsSchema, value(), shapes.seconds);
        return true;
      case '--timeout':
        options.timeoutMs = validated('--timeout', secondsSchema, value(), shapes.seconds);
        return true;
      case '--json':
        options.json = true;
        return true;
      default:
        return false;
    }
  });
  if (positional === 'help') return { command: 'help' };
  return { command: 'doctor', options: { ...options, url: oneUrl(positional) } };
}
