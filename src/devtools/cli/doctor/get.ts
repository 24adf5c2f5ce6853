/** N4: the standalone GET check: an event stream or 405 is fine, 404 and 406 are faults. */
import type { Finding } from './report.js';

/** What a client makes of a GET refused with 404 or 406. */
const refusals: Partial<Record<number, string>> = {
  404: '404: clients read a 404 as "session expired" and start a new session, over and over',
  406: '406 to Accept: text/event-stream: clients take it for a broken server, not for "no stream here"',
};

export function getFinding(status: number, type: string): Finding {
  if (status === 405)
    return { check: 'get', level: 'ok', text: 'GET answered 405: no standalone stream (allowed; messages come on POST responses)' };
  const refusal = refusals[status];
  if (refusal !== undefined) {
    return {
      check: 'get',
      level: 'fault',
      text: `the standalone GET answered ${refusal}`,
      fix: 'answer 405 Method Not Allowed when you offer no GET stream, or serve one (text/event-stream)',
    };
  }
  return {
    check: 'get',
    level: 'fault',
    text: `the standalone GET answered HTTP ${status}${type === '' ? '' : ` (${type})`}, neither an event stream nor 405`,
    fix: 'answer the GET with text/event-stream, or 405 Method Not Allowed',
  };
}
