/**
 * W5: the chart view's server, on a loopback address only. It serves the page (charts drawn
 * from the machines), a recording to replay, and the live feed: recorder lines POSTed to
 * `/ingest` (by `attachToView` / `viewInspector`) go out to every open page over SSE at
 * `/events`, the history first. Node only (`node:http`): the CLI's `view` command and tests run
 * it; the page and the bridge need no Node.
 */
import { Buffer } from 'node:buffer';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { recordingFormat } from '../recorder.js';
import { transportChartVersion, transportCharts } from '../chart-model.js';
import { pageHtml } from './page.js';
import { packageVersion } from '../version.js';
import { InvalidRecordingError } from '../../../machines/errors.js';
import { checkLine, checkRecording } from './recording.js';

export interface ViewServerOptions {
  /** Loopback only: '127.0.0.1' (default) or '::1'. */
  host?: '127.0.0.1' | '::1';
  /** 0 (default): any free port. */
  port?: number;
  /** A recording to open at once (its text), and the name the page shows for it. */
  recording?: { text: string; name: string };
  /** Recorder lines kept for a page that opens later (default 20,000; the oldest go first). */
  history?: number;
}

export interface ViewServer {
  /** The page's address. */
  url: URL;
  /** Where a bridge POSTs recorder lines. */
  ingestUrl: URL;
  /** Hands recorder lines to every open page (what `/ingest` does): how many were accepted and rejected, and why the first few were rejected (U9). */
  ingest(text: string): { accepted: number; rejected: number; problems: string[] };
  /** Pages connected to the live feed. */
  readonly pages: number;
  close(): Promise<void>;
}

/** Largest body `/ingest` reads. */
const maxIngestBytes = 4 * 1024 * 1024;

/**
 * U9: parses recorder lines (checked by `./recording.ts`); anything else is rejected, never
 * forwarded, and the first few rejected lines are named with the field and the shape expected.
 */
export function recorderLines(text: string): { lines: string[]; rejected: number; problems: string[] } {
  const lines: string[] = [];
  const problems: string[] = [];
  let rejected = 0;
  const raw = text.split('\n');
  for (let i = 0; i < raw.length; i++) {
    const line = (raw[i] ?? '').trim();
    if (line === '') continue;
    const checked = checkLine(line);
    if (checked.ok) {
      // Re-serialized: one line each, whatever whitespace came in.
      lines.push(JSON.stringify(checked.value));
      continue;
    }
    rejected++;
    if (problems.length < 5) problems.push(new InvalidRecordingError(i + 1, checked.issues).message);
  }
  return { lines, rejected, problems };
}

export async function serveView(options: ViewServerOptions = {}): Promise<ViewServer> {
  const host = options.host ?? '127.0.0.1';
  // Loopback only, whatever an untyped caller passes.
  if (!['127.0.0.1', '::1'].includes(host)) throw new TypeError(`the chart view listens on loopback only, not on ${host}`);
  const keep = options.history ?? 20_000;
  const history: string[] = [];
  const pages = new Set<ServerResponse>();
  const recording = options.recording;
  // U9: a recording with a line that is not a recorder line is refused, naming the line and field.
  if (recording !== undefined) checkRecording(recording.text);

  const boot = () => ({
    charts: transportCharts(),
    chart: transportChartVersion(),
    package: packageVersion,
    format: recordingFormat,
    events: '/events',
    recording: recording === undefined ? undefined : { url: '/recording', name: recording.name },
  });

  const ingest = (text: string) => {
    const { lines, rejected, problems } = recorderLines(text);
    for (const line of lines) {
      history.push(line);
      for (const page of pages) page.write(`data: ${line}\n\n`);
    }
    if (history.length > keep) history.splice(0, history.length - keep);
    return { accepted: lines.length, rejected, problems };
  };

  const send = (res: ServerResponse, status: number, type: string, body: string) => {
    res.writeHead(status, { 'content-type': type, 'cache-control': 'no-store', 'access-control-allow-origin': '*' });
    res.end(body);
  };

  const readBody = (req: IncomingMessage): Promise<string | undefined> =>
    new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxIngestBytes) {
          resolve(undefined);
          req.destroy();
          return;
        }
        chunks.push(chunk);
      });
      req.on('end', () => {
        resolve(Buffer.concat(chunks).toString('utf8'));
      });
      req.on('error', reject);
    });

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://view.invalid').pathname;
    // Only loopback names: a page of some other site cannot reach this through DNS rebinding.
    const hostName = (req.headers.host ?? '').replace(/:\d+$/, '');
    if (hostName !== '127.0.0.1' && hostName !== 'localhost' && hostName !== '[::1]') {
      send(res, 421, 'text/plain', 'the chart view answers only on loopback names\n');
      return;
    }
    if (req.method === 'OPTIONS') {
      res.writeHead(204, {
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'GET, POST',
        'access-control-allow-headers': 'content-type',
      });
      res.end();
      return;
    }
    if (req.method === 'GET' && path === '/') {
      send(res, 200, 'text/html; charset=utf-8', pageHtml(boot()));
    } else if (req.method === 'GET' && path === '/recording' && recording !== undefined) {
      send(res, 200, 'application/x-ndjson; charset=utf-8', recording.text);
    } else if (req.method === 'GET' && path === '/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', 'access-control-allow-origin': '*' });
      // The headers go out now, not with the first line: the page shows it is connected at once.
      res.write(': chart view\n\n');
      for (const line of history) res.write(`data: ${line}\n\n`);
      pages.add(res);
      res.on('close', () => pages.delete(res));
    } else if (req.method === 'POST' && path === '/ingest') {
      readBody(req).then(
        (body) => {
          if (body === undefined) {
            send(res, 413, 'application/json', JSON.stringify({ error: `body over ${maxIngestBytes} bytes` }));
            return;
          }
          const result = ingest(body);
          send(res, result.rejected > 0 && result.accepted === 0 ? 400 : 200, 'application/json', JSON.stringify(result));
        },
        () => {
          res.destroy();
        },
      );
    } else {
      send(res, 404, 'text/plain', 'not found\n');
    }
  });
  // An SSE stream must not be cut by the server's request timeouts.
  server.requestTimeout = 0;
  server.headersTimeout = 10_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const url = new URL(`http://${host === '::1' ? '[::1]' : host}:${port}/`);

  return {
    url,
    ingestUrl: new URL('/ingest', url),
    ingest,
    get pages() {
      return pages.size;
    },
    close() {
      for (const page of pages) page.end();
      pages.clear();
      return new Promise((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      });
    },
  };
}
