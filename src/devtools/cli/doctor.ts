/**
 * N4: `mcp-xstate-transport doctor <url>`: probes a server with plain HTTP requests (no
 * transport in between, so every status, header and redirect is seen as the server sent it) and
 * prints one line per check; a fault or a note carries its fix. Exits 8 when it found a fault.
 *
 * The probes, in order: `server/discover` (2026-07-28) and `initialize` (2025-11-25), the
 * standalone GET, a stream watched for keep-alive, a page's preflight and request (CORS), the
 * cookies and redirects seen on the way, and on a 401 the authorization discovery. A session the
 * probes opened is closed with DELETE.
 */
import { createParser } from 'eventsource-parser';
import type { DoctorOptions } from './args.js';
import { classify, exitCodes } from './failure.js';
import { isRecord } from '../../record.js';
import { FIRST_MODERN_VERSION, PROTOCOL_VERSION_META_KEY } from '../../../machines/connection/messages.js';

export type Level = 'ok' | 'note' | 'fault';

/** One line of the report. */
export interface Finding {
  check: 'era' | 'get' | 'keep-alive' | 'cors' | 'cookies' | 'redirect' | 'auth';
  level: Level;
  text: string;
  fix?: string;
}

const streamableVersion = '2025-11-25';
const clientInfo = { name: 'mcp-xstate-transport-doctor', version: '1' };
const envelope = {
  [PROTOCOL_VERSION_META_KEY]: FIRST_MODERN_VERSION,
  'io.modelcontextprotocol/clientInfo': clientInfo,
  'io.modelcontextprotocol/clientCapabilities': {},
};
/** Idle cutoffs a quiet stream meets: many proxies and load balancers, then undici's bodyTimeout and browsers. */
const proxyCutoffS = 60;
const clientCutoffS = 300;

type Json = Record<string, unknown>;

/** A probe's answer: status, headers, and the JSON-RPC message it carried (JSON or the first SSE answer). */
interface Answer {
  status: number;
  headers: Headers;
  message: Json | undefined;
}

const isRedirect = (status: number) => status >= 300 && status < 400 && status !== 304;

class Probes {
  private nextId = 1;
  constructor(private readonly options: DoctorOptions) {}

  private headers(extra: Record<string, string>): Headers {
    const headers = new Headers(this.options.headers);
    for (const [name, value] of Object.entries(extra)) headers.set(name, value);
    return headers;
  }

  /** One request, redirects not followed; `stream`: its body is watched, so the watch window is added to the timeout. */
  fetch(url: URL, init: RequestInit & { headers?: Record<string, string> }, stream = false): Promise<Response> {
    return fetch(url, {
      ...init,
      headers: this.headers(init.headers ?? {}),
      redirect: 'manual',
      signal: AbortSignal.timeout(this.options.timeoutMs + (stream ? this.options.keepAliveWindowMs : 0)),
    });
  }

  /** POSTs one JSON-RPC message; reads the answer to it from a JSON body or an event stream. */
  async post(url: URL, method: string, params: Json, headers: Record<string, string> = {}, notification = false): Promise<Answer> {
    const id = this.nextId++;
    const body = notification ? { jsonrpc: '2.0', method, params } : { jsonrpc: '2.0', id, method, params };
    const response = await this.fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify(body),
    });
    const type = response.headers.get('content-type') ?? '';
    let message: Json | undefined;
    if (type.includes('text/event-stream') && response.body !== null) {
      message = await firstAnswer(response.body, id);
    } else {
      const text = await response.text();
      try {
        const parsed: unknown = JSON.parse(text);
        message = isRecord(parsed) ? parsed : undefined;
      } catch {
        message = undefined;
      }
    }
    return { status: response.status, headers: response.headers, message };
  }
}

/** The first JSON-RPC answer to `id` on an event stream; the stream is cancelled after it. */
async function firstAnswer(body: ReadableStream<Uint8Array>, id: number): Promise<Json | undefined> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let found: Json | undefined;
  const parser = createParser({
    onEvent: (event) => {
      try {
        const data: unknown = JSON.parse(event.data);
        if (found === undefined && isRecord(data) && data.id === id) found = data;
      } catch {
        // not JSON: a priming event or a comment-like payload
      }
    },
  });
  try {
    for (let chunks = 0; found === undefined && chunks < 10_000; chunks++) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
  return found;
}

/** What a stream carried while it was watched: when the first keep-alive came, and whether it ended. */
interface Watched {
  keepAliveAfterMs: number | undefined;
  endedAfterMs: number | undefined;
}

/**
 * Watches an event stream for `windowMs`: a keep-alive is an SSE comment (`: keepalive`) or any
 * event more than a second after the stream opened (the first events are the stream's own:
 * a priming event, an acknowledgement).
 */
async function watchStream(body: ReadableStream<Uint8Array>, windowMs: number): Promise<Watched> {
  const opened = performance.now();
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let keepAliveAfterMs: number | undefined;
  const seen = () => {
    const after = performance.now() - opened;
    keepAliveAfterMs ??= after;
  };
  const parser = createParser({
    onComment: seen,
    onEvent: () => {
      if (performance.now() - opened > 1_000) seen();
    },
  });
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<'deadline'>((resolve) => {
    timer = setTimeout(() => {
      resolve('deadline');
    }, windowMs);
  });
  let endedAfterMs: number | undefined;
  try {
    for (let chunks = 0; keepAliveAfterMs === undefined && chunks < 10_000; chunks++) {
      const next = await Promise.race([reader.read(), deadline]);
      if (next === 'deadline') break;
      if (next.done) {
        endedAfterMs = performance.now() - opened;
        break;
      }
      parser.feed(decoder.decode(next.value, { stream: true }));
    }
  } catch {
    endedAfterMs = performance.now() - opened;
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => undefined);
  }
  return { keepAliveAfterMs, endedAfterMs };
}

/** N6: the headers of a modern POST a preflight must admit, and how the fix spells them. */
const modernRequestHeaders = ['mcp-protocol-version', 'mcp-method', 'mcp-name'];
const headerNames: Record<string, string> = {
  'mcp-protocol-version': 'MCP-Protocol-Version',
  'mcp-method': 'Mcp-Method',
  'mcp-name': 'Mcp-Name',
};

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

function listHeader(headers: Headers, name: string): string[] {
  return (headers.get(name) ?? '')
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== '');
}

/** Prints each finding as it is made: `FAULT  get         … — fix: …`, or a JSON line. */
class Report {
  readonly findings: Finding[] = [];
  constructor(private readonly json: boolean) {}

  add(finding: Finding): void {
    this.findings.push(finding);
    if (this.json) {
      console.log(JSON.stringify({ event: 'check', ...finding }));
      return;
    }
    const level = finding.level === 'fault' ? 'FAULT' : finding.level;
    console.log(
      `${level.padEnd(6)} ${finding.check.padEnd(11)} ${finding.text}${finding.fix === undefined ? '' : ` — fix: ${finding.fix}`}`,
    );
  }

  /** N6: what is being checked now, printed before the probe goes out (a wait says how long it may last). */
  checking(check: Finding['check'], text: string): void {
    if (this.json) console.log(JSON.stringify({ event: 'checking', check, text }));
    else console.log(`${'…'.padEnd(6)} ${check.padEnd(11)} ${text}`);
  }

  get faults(): number {
    return this.findings.filter((f) => f.level === 'fault').length;
  }

  /** The summary line and the exit code: 8 with a fault, otherwise `otherwise`. */
  end(otherwise: number = exitCodes.ok): number {
    const notes = this.findings.filter((f) => f.level === 'note').length;
    const faults = this.faults;
    const exitCode = faults > 0 ? exitCodes.doctorFault : otherwise;
    const summary =
      faults + notes === 0
        ? 'no findings'
        : [faults > 0 ? `${faults} fault${faults > 1 ? 's' : ''}` : '', notes > 0 ? `${notes} note${notes > 1 ? 's' : ''}` : '']
            .filter((part) => part !== '')
            .join(', ');
    if (this.json) console.log(JSON.stringify({ event: 'result', faults, notes, exitCode }));
    else console.log(`result: ${summary}`);
    return exitCode;
  }
}

/** The rpc error's text, for the era line: `JSON-RPC error -32601 Method not found`, or the HTTP status. */
function refusal(answer: Answer): string {
  const error = answer.message?.error;
  if (isRecord(error)) return `JSON-RPC error ${String(error.code)}${typeof error.message === 'string' ? ` ${error.message}` : ''}`;
  return `HTTP ${answer.status}`;
}

async function checkAuth(probes: Probes, report: Report, url: URL, answer: Answer): Promise<void> {
  const challenge = answer.headers.get('www-authenticate');
  const fixHeader = `WWW-Authenticate: Bearer resource_metadata="${url.origin}/.well-known/oauth-protected-resource${url.pathname === '/' ? '' : url.pathname}", and serve RFC 9728 metadata there naming your authorization server`;
  if (challenge === null) {
    report.add({
      check: 'auth',
      level: 'fault',
      text: `HTTP ${answer.status} without WWW-Authenticate: a client cannot discover how to authorize`,
      fix: fixHeader,
    });
    return;
  }
  const named = /resource_metadata\s*=\s*"?([^",\s]+)"?/i.exec(challenge)?.[1];
  const candidates =
    named !== undefined
      ? [new URL(named, url)]
      : [
          ...(url.pathname === '/' ? [] : [new URL(`/.well-known/oauth-protected-resource${url.pathname}`, url)]),
          new URL('/.well-known/oauth-protected-resource', url),
        ];
  let found: { at: URL; servers: unknown } | undefined;
  const tried: string[] = [];
  for (const at of candidates) {
    try {
      const response = await probes.fetch(at, { headers: { accept: 'application/json' } });
      tried.push(`${at.href} → HTTP ${response.status}`);
      if (response.status !== 200) continue;
      const body: unknown = await response.json();
      if (isRecord(body)) {
        found = { at, servers: body.authorization_servers };
        break;
      }
    } catch (error) {
      tried.push(`${at.href} → ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  if (found === undefined) {
    report.add({
      check: 'auth',
      level: 'fault',
      text: `HTTP ${answer.status} with WWW-Authenticate: ${challenge.split(/[\s,]/)[0] ?? ''} ${named === undefined ? 'without resource_metadata, and' : 'naming resource_metadata, but'} no protected-resource metadata (${tried.join('; ')}): clients cannot find the authorization server`,
      fix: fixHeader,
    });
    return;
  }
  const servers = Array.isArray(found.servers) ? found.servers.filter((s): s is string => typeof s === 'string') : [];
  if (servers.length === 0) {
    report.add({
      check: 'auth',
      level: 'fault',
      text: `the protected-resource metadata at ${found.at.href} names no authorization_servers`,
      fix: 'list the authorization server issuer URL(s) in authorization_servers (RFC 9728)',
    });
    return;
  }
  if (named === undefined) {
    report.add({
      check: 'auth',
      level: 'note',
      text: `needs authorization; WWW-Authenticate has no resource_metadata, the metadata is found at the well-known URL ${found.at.href} (authorization server ${servers.join(', ')})`,
      fix: `name it in the challenge: WWW-Authenticate: Bearer resource_metadata="${found.at.href}" (older clients look nowhere else)`,
    });
    return;
  }
  report.add({
    check: 'auth',
    level: 'ok',
    text: `needs authorization: metadata at ${found.at.href}, authorization server ${servers.join(', ')}`,
  });
}

/**
 * A redirect on the first probe: to another origin a fault (the transport, like browsers with
 * credentials, does not follow it, A3); on the same origin a note, and the probes go on there.
 */
function checkRedirect(report: Report, from: URL, answer: Answer): URL | 'stop' | undefined {
  if (!isRedirect(answer.status)) return undefined;
  const location = answer.headers.get('location');
  const target = location === null ? undefined : new URL(location, from);
  if (target === undefined) {
    report.add({ check: 'redirect', level: 'fault', text: `HTTP ${answer.status} without a Location`, fix: 'serve MCP at this URL' });
    return 'stop';
  }
  if (target.origin !== from.origin) {
    report.add({
      check: 'redirect',
      level: 'fault',
      text: `POST redirected (HTTP ${answer.status}) to another origin, ${target.origin}: clients refuse to follow it (this transport follows same-origin redirects only, A3) and would send the session and tokens elsewhere; the other checks were not run`,
      fix: `give clients the final URL (${target.href}), or serve MCP at ${from.href}`,
    });
    return 'stop';
  }
  report.add({
    check: 'redirect',
    level: answer.status === 307 || answer.status === 308 ? 'note' : 'fault',
    text: `POST redirected (HTTP ${answer.status}) to ${target.pathname}${target.search} on the same origin${answer.status === 307 || answer.status === 308 ? '' : `: a ${answer.status} turns the POST into a GET`}`,
    fix: `give clients the final URL (${target.href})${answer.status === 307 || answer.status === 308 ? '' : ', or redirect with 307/308'}`,
  });
  return target;
}

export async function doctor(options: DoctorOptions): Promise<number> {
  const report = new Report(options.json);
  const probes = new Probes(options);
  let url = new URL(options.url);
  if (!options.json) console.log(`doctor ${url.href}`);
  const modernHeaders = { 'mcp-protocol-version': FIRST_MODERN_VERSION, 'mcp-method': 'server/discover' };
  let sessionId: string | undefined;
  try {
    // 1. The eras: server/discover (2026-07-28), then initialize (2025-11-25).
    report.checking('era', 'which protocol eras answer: server/discover (2026-07-28), then initialize (2025-11-25)');
    let discover = await probes.post(url, 'server/discover', { _meta: envelope }, modernHeaders);
    const moved = checkRedirect(report, url, discover);
    if (moved === 'stop') return report.end();
    if (moved !== undefined) {
      url = moved;
      discover = await probes.post(url, 'server/discover', { _meta: envelope }, modernHeaders);
    }
    if (discover.status === 401 || discover.status === 403) {
      report.checking('auth', `HTTP ${discover.status}: how a client discovers authorization (WWW-Authenticate, RFC 9728 metadata)`);
      await checkAuth(probes, report, url, discover);
      if (report.faults === 0) {
        report.add({
          check: 'auth',
          level: 'note',
          text: 'the other checks need a token',
          fix: "rerun with --header 'Authorization: Bearer …'",
        });
      }
      return report.end(exitCodes.unauthorized);
    }
    const discovered = isRecord(discover.message?.result) ? discover.message.result : undefined;
    const supported = Array.isArray(discovered?.supportedVersions)
      ? discovered.supportedVersions.filter((v): v is string => typeof v === 'string')
      : [];
    const modern = discover.status === 200 && supported.length > 0;

    const init = await probes.post(url, 'initialize', { protocolVersion: streamableVersion, capabilities: {}, clientInfo });
    const initialized = init.status === 200 && isRecord(init.message?.result) ? init.message.result : undefined;
    sessionId = initialized === undefined ? undefined : (init.headers.get('mcp-session-id') ?? undefined);
    const negotiated = typeof initialized?.protocolVersion === 'string' ? initialized.protocolVersion : undefined;
    if (!modern && negotiated === undefined) {
      report.add({
        check: 'era',
        level: 'fault',
        text: `neither 2026-07-28 (server/discover: ${refusal(discover)}) nor 2025-11-25 (initialize: ${refusal(init)}) answered: not a Streamable HTTP MCP endpoint`,
        fix: 'check the URL (the endpoint path, often /mcp); a 2024-11-05 HTTP+SSE server answers a GET instead',
      });
      report.end();
      return exitCodes.notMcp;
    }
    const eras: string[] = [];
    if (modern) eras.push(`2026-07-28 (sessionless; server/discover lists supported versions: ${supported.join(', ')})`);
    else eras.push(`no 2026-07-28 (server/discover: ${refusal(discover)})`);
    if (negotiated !== undefined)
      eras.push(`the 2025 era (initialize answered protocol ${negotiated}, ${sessionId === undefined ? 'no session' : 'with a session'})`);
    else {
      const data = init.message?.error;
      const listed =
        isRecord(data) && isRecord(data.data) && Array.isArray(data.data.supported)
          ? ` (supported: ${data.data.supported.map(String).join(', ')})`
          : '';
      eras.push(`no 2025 era (initialize: ${refusal(init)}${listed})`);
    }
    report.add({ check: 'era', level: 'ok', text: eras.join('; ') });
    if (negotiated !== undefined) {
      await probes.post(url, 'notifications/initialized', {}, sessionHeaders(sessionId, negotiated), true).catch(() => undefined);
    }

    // 2. The standalone GET (2025-11-25): an event stream or 405; 404 and 406 are faults.
    let stream: { response: Response; what: string } | undefined;
    if (negotiated !== undefined) {
      report.checking('get', 'the standalone GET (Accept: text/event-stream)');
      const get = await probes.fetch(url, { headers: { accept: 'text/event-stream', ...sessionHeaders(sessionId, negotiated) } }, true);
      const type = get.headers.get('content-type') ?? '';
      if (get.status === 200 && type.includes('text/event-stream') && get.body !== null) {
        report.add({ check: 'get', level: 'ok', text: 'GET opens the standalone stream (text/event-stream)' });
        stream = { response: get, what: 'the standalone GET stream' };
      } else {
        await get.body?.cancel().catch(() => undefined);
        report.add(getFinding(get.status, type));
      }
    }

    // 3. Keep-alive: on the GET stream, or in 2026-07-28 on a subscriptions/listen stream.
    if (stream === undefined && modern) {
      report.checking('keep-alive', 'opening a subscriptions/listen stream to watch');
      const listen = await probes.fetch(
        url,
        {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            'mcp-protocol-version': FIRST_MODERN_VERSION,
            'mcp-method': 'subscriptions/listen',
          },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 'doctor-listen',
            method: 'subscriptions/listen',
            params: { _meta: envelope, notifications: { toolsListChanged: true, promptsListChanged: true, resourcesListChanged: true } },
          }),
        },
        true,
      );
      if (listen.status === 200 && (listen.headers.get('content-type') ?? '').includes('text/event-stream') && listen.body !== null) {
        stream = { response: listen, what: 'a subscriptions/listen stream' };
      } else await listen.body?.cancel().catch(() => undefined);
    }
    if (stream === undefined) {
      report.add({ check: 'keep-alive', level: 'ok', text: 'no long-lived stream to watch (no GET stream, no subscriptions/listen)' });
    } else {
      report.checking(
        'keep-alive',
        `watching ${stream.what} for a keep-alive: up to ${seconds(options.keepAliveWindowMs)} (--keepalive-window), less if one comes`,
      );
      await checkKeepAlive(report, stream.response, stream.what, options.keepAliveWindowMs);
    }

    // 4. Pages on another origin: the preflight, then a request with Origin.
    report.checking(
      'cors',
      `a page on ${options.origin}: the preflight of a POST (Mcp-Method, Mcp-Name, MCP-Protocol-Version), then a request with Origin`,
    );
    await checkCors(probes, report, url, options, { modern, negotiated, sessionId });

    // 5. Cookies seen on the way (names only).
    const cookies = [...discover.headers.getSetCookie(), ...init.headers.getSetCookie()].map((c) => c.split('=')[0]?.trim() ?? '');
    if (cookies.length > 0) {
      report.add({
        check: 'cookies',
        level: 'note',
        text: `the server sets cookie(s) ${[...new Set(cookies)].join(', ')} (an affinity cookie?): this transport keeps them per origin and sends them back on Node (N3; \`cookies: false\` opts out); browsers keep their own (cross-origin only with credentials: 'include')`,
        fix: 'none for this transport; other clients may drop cookies, so route a session on Mcp-Session-Id rather than a cookie when you can',
      });
    } else report.add({ check: 'cookies', level: 'ok', text: 'no Set-Cookie' });
    if (moved === undefined) report.add({ check: 'redirect', level: 'ok', text: 'no redirect' });
    report.add({ check: 'auth', level: 'ok', text: 'no authorization asked (no 401)' });
    return report.end();
  } catch (error) {
    const failure = classify(error, options.url);
    if (options.json)
      console.log(JSON.stringify({ event: 'failed', kind: failure.kind, exitCode: failure.exitCode, message: failure.message }));
    else console.error(`mcp-xstate-transport: ${failure.message}`);
    return failure.exitCode;
  } finally {
    if (sessionId !== undefined) {
      await probes
        .fetch(url, { method: 'DELETE', headers: { 'mcp-session-id': sessionId } })
        .then((response) => response.body?.cancel())
        .catch(() => undefined);
    }
  }
}

function sessionHeaders(sessionId: string | undefined, version: string): Record<string, string> {
  return { 'mcp-protocol-version': version, ...(sessionId === undefined ? {} : { 'mcp-session-id': sessionId }) };
}

export function getFinding(status: number, type: string): Finding {
  if (status === 405)
    return { check: 'get', level: 'ok', text: 'GET answered 405: no standalone stream (allowed; messages come on POST responses)' };
  if (status === 404)
    return {
      check: 'get',
      level: 'fault',
      text: 'the standalone GET answered 404: clients read a 404 as "session expired" and start a new session, over and over',
      fix: 'answer 405 Method Not Allowed when you offer no GET stream, or serve one (text/event-stream)',
    };
  if (status === 406)
    return {
      check: 'get',
      level: 'fault',
      text: 'the standalone GET answered 406 to Accept: text/event-stream: clients take it for a broken server, not for "no stream here"',
      fix: 'answer 405 Method Not Allowed when you offer no GET stream, or serve one (text/event-stream)',
    };
  return {
    check: 'get',
    level: 'fault',
    text: `the standalone GET answered HTTP ${status}${type === '' ? '' : ` (${type})`}, neither an event stream nor 405`,
    fix: 'answer the GET with text/event-stream, or 405 Method Not Allowed',
  };
}

async function checkKeepAlive(report: Report, response: Response, what: string, windowMs: number): Promise<void> {
  const buffering = response.headers.get('x-accel-buffering');
  const watched = await watchStream(response.body as ReadableStream<Uint8Array>, windowMs);
  const cutoffs = `idle cutoffs: ${proxyCutoffS} s on many proxies and load balancers, ${clientCutoffS} s in clients (undici's bodyTimeout, browsers)`;
  const fix = 'send an SSE comment (`: keepalive`) every 15–30 s on every stream (the SDK servers: keepAliveMs, default 15 s)';
  if (watched.keepAliveAfterMs !== undefined) {
    const late = watched.keepAliveAfterMs > (proxyCutoffS - 5) * 1000;
    report.add({
      check: 'keep-alive',
      level: late ? 'fault' : 'ok',
      text: `${what} carried a keep-alive after ${seconds(watched.keepAliveAfterMs)}${late ? ` (${cutoffs})` : ''}`,
      ...(late ? { fix } : {}),
    });
  } else if (watched.endedAfterMs !== undefined) {
    report.add({
      check: 'keep-alive',
      level: 'note',
      text: `the server ended ${what} after ${seconds(watched.endedAfterMs)} without a keep-alive: clients reconnect each time`,
      fix: 'keep the stream open and send an SSE comment every 15–30 s',
    });
  } else {
    report.add({
      check: 'keep-alive',
      level: 'fault',
      text: `no keep-alive on ${what} within ${seconds(windowMs)} (${cutoffs}: a quiet stream is cut)`,
      fix,
    });
  }
  if (buffering?.toLowerCase() !== 'no') {
    report.add({
      check: 'keep-alive',
      level: 'note',
      text: `${what} has no X-Accel-Buffering: no: behind nginx the events are buffered, and arrive late or in bursts`,
      fix: 'send X-Accel-Buffering: no with every text/event-stream response (or proxy_buffering off in nginx)',
    });
  }
}

async function checkCors(
  probes: Probes,
  report: Report,
  url: URL,
  options: DoctorOptions,
  era: { modern: boolean; negotiated: string | undefined; sessionId: string | undefined },
): Promise<void> {
  // N6: a page's modern POST carries Mcp-Method and Mcp-Name (the era probe of a negotiating
  // client too, whatever era the server speaks): the preflight must admit them in every era.
  const wanted = [
    'content-type',
    ...modernRequestHeaders,
    ...(era.sessionId === undefined ? [] : ['mcp-session-id', 'last-event-id']),
    ...options.headers.map(([name]) => name.toLowerCase()),
  ];
  const preflight = await probes.fetch(url, {
    method: 'OPTIONS',
    headers: {
      origin: options.origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': [...new Set(wanted)].join(', '),
    },
  });
  await preflight.body?.cancel().catch(() => undefined);
  const allowOrigin = preflight.headers.get('access-control-allow-origin');
  const corsFix = `answer the preflight (OPTIONS) with Access-Control-Allow-Origin, -Allow-Methods (GET, POST, DELETE), -Allow-Headers (${wanted.join(', ')}), and expose Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate`;
  if (allowOrigin === null) {
    report.add({
      check: 'cors',
      level: 'note',
      text: `no CORS (the preflight from ${options.origin} answered HTTP ${preflight.status} without Access-Control-Allow-Origin): pages on other origins cannot connect; fine when only servers and desktop apps do`,
      fix: `for browser clients, ${corsFix}`,
    });
    return;
  }
  const faults: string[] = [];
  if (allowOrigin !== '*' && allowOrigin !== options.origin) faults.push(`the preflight allows ${allowOrigin}, not ${options.origin}`);
  const allowHeaders = listHeader(preflight.headers, 'access-control-allow-headers');
  const missing = allowHeaders.includes('*') ? [] : wanted.filter((name) => !allowHeaders.includes(name) && name !== 'content-type');
  const modernMissing = missing.filter((name) => modernRequestHeaders.includes(name));
  const otherMissing = missing.filter((name) => !modernRequestHeaders.includes(name));
  if (modernMissing.length > 0) {
    faults.push(
      `the preflight of a 2026-07-28 POST does not allow ${modernMissing.map((name) => headerNames[name] ?? name).join(', ')} in Access-Control-Allow-Headers: a browser blocks a modern client's requests (and a negotiating client's first probe) before they are sent`,
    );
  }
  if (otherMissing.length > 0) faults.push(`the preflight does not allow the header(s) ${otherMissing.join(', ')}`);
  const allowMethods = listHeader(preflight.headers, 'access-control-allow-methods');
  if (era.sessionId !== undefined && !allowMethods.includes('*') && !allowMethods.includes('delete')) {
    faults.push('the preflight does not allow DELETE (a page cannot end its session)');
  }

  // A request as a page sends it: Origin, and what the answer exposes to the page.
  const request =
    era.negotiated !== undefined
      ? await probes.post(url, 'ping', {}, { origin: options.origin, ...sessionHeaders(era.sessionId, era.negotiated) })
      : await probes.post(
          url,
          'server/discover',
          { _meta: envelope },
          { origin: options.origin, 'mcp-protocol-version': FIRST_MODERN_VERSION, 'mcp-method': 'server/discover' },
        );
  if (request.headers.get('access-control-allow-origin') === null) {
    faults.push(`the answer to a POST with Origin (HTTP ${request.status}) has no Access-Control-Allow-Origin`);
  } else if (era.sessionId !== undefined) {
    const exposed = listHeader(request.headers, 'access-control-expose-headers');
    if (!exposed.includes('mcp-session-id') && !exposed.includes('*')) {
      faults.push(
        'Access-Control-Expose-Headers does not name Mcp-Session-Id: a browser hides the header, so a page never learns its session and every request after initialize fails',
      );
    }
  }
  if (faults.length === 0) {
    report.add({
      check: 'cors',
      level: 'ok',
      text: `pages from ${options.origin} can connect (preflight allows the MCP headers${era.sessionId === undefined ? '' : '; Mcp-Session-Id is exposed'})`,
    });
    return;
  }
  for (const text of faults) report.add({ check: 'cors', level: 'fault', text, fix: corsFix });
}
