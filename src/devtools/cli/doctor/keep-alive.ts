/** N4, N6: the keep-alive check: a long-lived stream watched for a keep-alive against common idle cutoffs, and X-Accel-Buffering. */
import { createParser } from 'eventsource-parser';
import { seconds, type Report } from './report.js';

/** Idle cutoffs a quiet stream meets: many proxies and load balancers, then undici's bodyTimeout and browsers. */
const proxyCutoffS = 60;
const clientCutoffS = 300;

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

export async function checkKeepAlive(report: Report, response: Response, what: string, windowMs: number): Promise<void> {
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
