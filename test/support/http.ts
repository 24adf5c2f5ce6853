/**
 * What every test server on 127.0.0.1 does the same way (the SDK fixture, the fault proxy, the
 * scripted and puppet servers, the OAuth fixtures, the CORS front): read a request body, pick a
 * field out of a JSON-RPC body, listen and shut down, and keep a log of requests a test can wait on.
 */
import { request, type Agent, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** The whole request body as bytes. */
export async function readBytes(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The whole request body as UTF-8 text. */
export async function readText(req: IncomingMessage): Promise<string> {
  return (await readBytes(req)).toString('utf8');
}

/** A body as JSON: undefined when empty, the raw text when it is not JSON. */
export function parseBody(raw: string | Buffer): unknown {
  const text = typeof raw === 'string' ? raw : raw.toString('utf8');
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

/** `body[name]` when `body` is an object that has it (a JSON-RPC `method`, `id`, `params`…). */
export function fieldOf(body: unknown, name: string): unknown {
  return typeof body === 'object' && body !== null && name in body ? (body as Record<string, unknown>)[name] : undefined;
}

/** The JSON-RPC method of a body, when it has a string one. */
export function rpcMethodOf(body: unknown): string | undefined {
  const method = fieldOf(body, 'method');
  return typeof method === 'string' ? method : undefined;
}

/**
 * The one item of `items` that `match` picks (the only item when no match is given): a test picks
 * a recorded request by what it is (its method, id, session, token), never by its position.
 * Throws, naming `what` and how many matched, when none or several do.
 */
export function only<T>(items: readonly T[], what: string, match: (item: T) => boolean = () => true): T {
  const found = items.filter(match);
  if (found.length !== 1) throw new Error(`expected exactly one ${what}, found ${found.length} (of ${items.length})`);
  return found[0]!;
}

/** Starts `server` on 127.0.0.1 (`port` 0: any free port) and returns the port it got. */
export async function listenLocal(server: Server, port = 0): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  return (server.address() as AddressInfo).port;
}

/** The open sockets of `server`, kept up to date, for a close that destroys them first. */
export function openSockets(server: Server): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return sockets;
}

/** Closes every connection of `server` (open streams included) and stops it listening. */
export async function shutDown(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => {
    server.close(() => {
      resolve();
    });
  });
}

/**
 * Every request a server saw, in arrival order, and `waitFor()`: the first that matches, now or
 * when it arrives, or a rejection after `timeoutMs`.
 */
export class RequestLog<T> {
  /** The log itself, in arrival order (servers hand this array out as their `requests`). */
  readonly entries: T[] = [];
  private waiters: { match: (entry: T) => boolean; resolve: (entry: T) => void }[] = [];

  /** `what` names the server in the timeout's message. */
  constructor(private readonly what: string) {}

  add(entry: T): void {
    this.entries.push(entry);
    for (const waiter of [...this.waiters]) {
      if (waiter.match(entry)) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve(entry);
      }
    }
  }

  waitFor(match: (entry: T) => boolean, timeoutMs = 5_000): Promise<T> {
    const seen = this.entries.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const waiter = {
        match,
        resolve: (entry: T) => {
          clearTimeout(timer);
          resolve(entry);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new Error(`waitFor: no matching request ${this.what} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }
}

/**
 * Forwards `req` to `target` as it came (method, headers, body streamed) and the answer back to
 * `res`; `headersOf` may change the answer's headers. Either side closing ends the other.
 */
export function forwardTo(
  req: IncomingMessage,
  res: ServerResponse,
  target: URL,
  options: { agent?: Agent; headersOf?: (answer: IncomingMessage) => IncomingHttpHeaders } = {},
): void {
  const init = { method: req.method ?? 'GET', headers: req.headers, ...(options.agent === undefined ? {} : { agent: options.agent }) };
  const upstream = request(target, init, (answer) => {
    res.writeHead(answer.statusCode ?? 502, options.headersOf?.(answer) ?? answer.headers);
    answer.pipe(res);
  });
  upstream.on('error', () => {
    res.destroy();
  });
  res.on('close', () => {
    upstream.destroy();
  });
  req.pipe(upstream);
}
