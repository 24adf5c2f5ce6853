/**
 * N4: `mcp-xstate-transport doctor <url>`: probes a server with plain HTTP requests (no
 * transport in between, so every status, header and redirect is seen as the server sent it) and
 * prints one line per check; a fault or a note carries its fix. Exits 8 when it found a fault.
 *
 * The probes, in order: `server/discover` (2026-07-28) and `initialize` (2025-11-25), the
 * standalone GET, a stream watched for keep-alive, a page's preflight and request (CORS), the
 * cookies and redirects seen on the way, and on a 401 the authorization discovery. A session the
 * probes opened is closed with DELETE.
 *
 * This file runs the checks in that order; each check is a file of this folder (`era.ts`,
 * `get.ts`, `keep-alive.ts`, `cors.ts`, `redirect.ts`, `auth.ts`), over the plain probes
 * (`probes.ts`) and the report that prints each finding as it is made (`report.ts`).
 */
import type { DoctorOptions } from '../args.js';
import { classify, exitCodes } from '../failure.js';
import { isRecord } from '../../../record.js';
import { FIRST_MODERN_VERSION } from '../../../../machines/connection/messages.js';
import { checkAuth } from './auth.js';
import { checkCors } from './cors.js';
import { refusal } from './era.js';
import { getFinding } from './get.js';
import { checkKeepAlive } from './keep-alive.js';
import { clientInfo, envelope, Probes, sessionHeaders, streamableVersion } from './probes.js';
import { checkRedirect } from './redirect.js';
import { Report, seconds } from './report.js';

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
