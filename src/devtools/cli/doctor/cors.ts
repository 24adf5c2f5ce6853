/** N4, N6: the CORS check: a page's preflight of a modern POST, then a request with Origin and what its answer exposes. */
import type { DoctorOptions } from '../args.js';
import { FIRST_MODERN_VERSION } from '../../../../machines/connection/messages.js';
import { envelope, sessionHeaders, type Probes } from './probes.js';
import type { Report } from './report.js';

/** N6: the headers of a modern POST a preflight must admit, and how the fix spells them. */
const modernRequestHeaders = ['mcp-protocol-version', 'mcp-method', 'mcp-name'];
const headerNames: Record<string, string> = {
  'mcp-protocol-version': 'MCP-Protocol-Version',
  'mcp-method': 'Mcp-Method',
  'mcp-name': 'Mcp-Name',
};

function listHeader(headers: Headers, name: string): string[] {
  return (headers.get(name) ?? '')
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part !== '');
}

export async function checkCors(
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
