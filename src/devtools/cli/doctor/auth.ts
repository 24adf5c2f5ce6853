/** N4: the authorization check on a 401/403: WWW-Authenticate and the RFC 9728 protected-resource metadata a client discovers from it. */
import { isRecord } from '../../../record.js';
import type { Answer, Probes } from './probes.js';
import type { Report } from './report.js';

export async function checkAuth(probes: Probes, report: Report, url: URL, answer: Answer): Promise<void> {
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
