/** N4: the redirect check on the first probe. */
import { isRedirect, type Answer } from './probes.js';
import type { Report } from './report.js';

/**
 * A redirect on the first probe: to another origin a fault (the transport, like browsers with
 * credentials, does not follow it, A3); on the same origin a note, and the probes go on there.
 */
export function checkRedirect(report: Report, from: URL, answer: Answer): URL | 'stop' | undefined {
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
