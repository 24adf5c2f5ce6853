/** The command line, parsed: what to connect to and what to do there. */

export interface CliOptions {
  url: string;
  headers: [string, string][];
  call: { tool: string; args: Record<string, unknown> } | undefined;
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

export type Parsed = { command: 'help' } | { command: 'connect'; options: CliOptions };

/** A mistake on the command line: the message says what to change. */
export class UsageError extends Error {}

export const usage = `usage: mcp-xstate-transport [connect] <url> [options]
       mcp-xstate-transport view [recording.jsonl]

Connects to an MCP server over Streamable HTTP, shows the transport's chart as it changes
(state, tags, milliseconds since start), lists the server's tools, resources and prompts,
and closes the session (DELETE).

options:
  --call <tool>        call a tool after listing
  --args <json>        the tool's arguments, a JSON object (default {})
  --header 'K: V'      add a request header, e.g. --header 'Authorization: Bearer …' (repeatable)
  --watch              stay connected: print notifications and state changes until Ctrl-C,
                       then close the session (DELETE)
  --record <file>      write the chart's lifecycle as JSON lines (session IDs and tokens redacted)
  --view               serve the chart view on 127.0.0.1 and show this session in it live
                       (with --watch, until Ctrl-C)
  --inspect [port]     watch the chart live in the Stately inspector, through @statelyai/inspect's
                       bridge on that port (default 8080; session IDs and tokens redacted)
  --json               print one JSON object per line on stdout, for scripts
  --timeout <seconds>  the longest wait for one step (default 30)
  -h, --help           this text

exit codes:
  0 done   1 other failure   2 bad command line or URL   3 server unreachable
  4 not an MCP server      5 the server needs authorization   6 a step timed out
  7 the called tool reported an error`;

function parseHeader(text: string): [string, string] {
  const colon = text.indexOf(':');
  const name = colon > 0 ? text.slice(0, colon).trim() : '';
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) throw new UsageError(`--header wants 'Name: value', got '${text}'`);
  return [name, text.slice(colon + 1).trim()];
}

function parseArgsJson(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--args is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new UsageError('--args must be a JSON object');
  return value as Record<string, unknown>;
}

/** Checks the URL the way the transport will use it: absolute, http or https. */
export function parseUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`not a URL: '${text}' (give the server's endpoint, e.g. http://127.0.0.1:3000/mcp)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`not an http(s) URL: '${text}' (Streamable HTTP needs http:// or https://)`);
  }
  return url;
}

export function parseArgs(argv: string[]): Parsed {
  const positional: string[] = [];
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
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const value = (): string => {
      const next = argv[++i];
      if (next === undefined) throw new UsageError(`${arg} needs a value`);
      return next;
    };
    switch (arg) {
      case '-h':
      case '--help':
        return { command: 'help' };
      case '--call':
        tool = value();
        break;
      case '--args':
        toolArgs = parseArgsJson(value());
        break;
      case '--header':
        options.headers.push(parseHeader(value()));
        break;
      case '--watch':
        options.watch = true;
        break;
      case '--record':
        options.record = value();
        break;
      case '--view':
        options.view = true;
        break;
      case '--inspect': {
        // An optional port: the next argument when it is a number.
        const next = argv[i + 1];
        const port = next !== undefined && /^\d+$/.test(next) ? Number(argv[++i]) : 8080;
        if (!(port > 0 && port < 65_536)) throw new UsageError('--inspect wants a port from 1 to 65535');
        options.inspect = port;
        break;
      }
      case '--json':
        options.json = true;
        break;
      case '--timeout': {
        const seconds = Number(value());
        if (!(seconds > 0)) throw new UsageError('--timeout wants a number of seconds greater than 0');
        options.timeoutMs = seconds * 1000;
        break;
      }
      default:
        if (arg.startsWith('-')) throw new UsageError(`unknown option ${arg}`);
        positional.push(arg);
    }
  }
  if (positional.length === 0) throw new UsageError('no URL given');
  if (positional.length > 1) throw new UsageError(`one URL expected, got: ${positional.join(' ')}`);
  if (toolArgs !== undefined && tool === undefined) throw new UsageError('--args needs --call <tool>');
  const url = positional[0] ?? '';
  parseUrl(url);
  return { command: 'connect', options: { ...options, url, call: tool === undefined ? undefined : { tool, args: toolArgs ?? {} } } };
}
