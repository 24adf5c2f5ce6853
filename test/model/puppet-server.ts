/**
 * A real HTTP server on 127.0.0.1 that answers nothing by itself: every request to the MCP
 * endpoint (POST, GET, DELETE), to the legacy message endpoint and to the OAuth token endpoint is
 * parked until the test answers it, so each answer is a step of a model path, taken exactly when
 * the path says. OAuth discovery documents are the only thing answered at once.
 *
 * It records which requests are parked (and which event streams it holds open) and notices when
 * the client gives one up (aborts it), so a test can compare the requests the server holds with
 * the ones the model expects.
 */
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { fieldOf, listenLocal, openSockets, parseBody, readText, shutDown } from '../support/http.js';

export type RpcId = string | number;

export interface PuppetRequest {
  /** Arrival order, from 0. */
  seq: number;
  method: string;
  /** Path of the URL, without the query. */
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  /** JSON-RPC method of the body, if any. */
  rpc: string | undefined;
  /** JSON-RPC id of the body, if it is a request. */
  id: RpcId | undefined;
  /** The `mcp-session-id` the request carried. */
  session: string | undefined;
  /** The `x-model-request` header: which fetch of the client this is. */
  client: string | undefined;
  /** parked: waiting for its answer; streaming: answered with an event stream kept open; done: answered; gone: the client left. */
  state: 'parked' | 'streaming' | 'done' | 'gone';
}

export interface PuppetReply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  /** Keep the response open after the body (an event stream). */
  stream?: boolean;
}

export interface PuppetServer {
  /** The MCP endpoint. */
  url: URL;
  origin: string;
  /** Where the protected-resource metadata is (named in 401 challenges). */
  resourceMetadataUrl: string;
  /** Every request received, in order (discovery documents included). */
  requests: PuppetRequest[];
  /** Requests waiting for an answer or holding an open stream. */
  held(): PuppetRequest[];
  answer(request: PuppetRequest, reply: PuppetReply): void;
  /** Writes to an open event stream (an event, a comment). */
  write(request: PuppetRequest, text: string): void;
  /** Ends an open event stream cleanly. */
  endStream(request: PuppetRequest): void;
  /** Destroys the connection of a request (a network error for the client). */
  drop(request: PuppetRequest): void;
  /** Resolves at the next arrival, answer or departure. */
  nextChange(): Promise<void>;
  close(): Promise<void>;
}

/** A field of a single message (a batch has none). */
function field(body: unknown, name: 'method' | 'id'): unknown {
  return Array.isArray(body) ? undefined : fieldOf(body, name);
}

export async function startPuppetServer(): Promise<PuppetServer> {
  const requests: PuppetRequest[] = [];
  const responses = new Map<PuppetRequest, ServerResponse>();
  let waiters: (() => void)[] = [];
  const changed = () => {
    const woken = waiters;
    waiters = [];
    for (const wake of woken) wake();
  };

  let origin = '';
  const discovery = (path: string): Record<string, unknown> | undefined => {
    if (path.startsWith('/.well-known/oauth-protected-resource')) {
      return { resource: `${origin}/mcp`, authorization_servers: [`${origin}/`] };
    }
    if (path.startsWith('/.well-known/oauth-authorization-server') || path.startsWith('/.well-known/openid-configuration')) {
      return {
        issuer: `${origin}/`,
        authorization_endpoint: `${origin}/authorize`,
        token_endpoint: `${origin}/token`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['none'],
      };
    }
    return undefined;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const rawBody = await readText(req);
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const body = parseBody(rawBody);
    const method = field(body, 'method');
    const id = field(body, 'id');
    const sessionHeader = req.headers['mcp-session-id'];
    const clientHeader = req.headers['x-model-request'];
    const request: PuppetRequest = {
      seq: requests.length,
      method: req.method ?? '',
      path,
      headers: req.headers,
      body,
      rpc: typeof method === 'string' ? method : undefined,
      id: typeof id === 'string' || typeof id === 'number' ? id : undefined,
      session: Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader,
      client: Array.isArray(clientHeader) ? clientHeader[0] : clientHeader,
      state: 'parked',
    };
    requests.push(request);
    const document = request.method === 'GET' ? discovery(path) : undefined;
    if (document !== undefined) {
      request.state = 'done';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(document));
      return;
    }
    const parked =
      path === '/mcp' || (path === '/messages' && request.method === 'POST') || (path === '/token' && request.method === 'POST');
    if (!parked) {
      request.state = 'done';
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    responses.set(request, res);
    res.on('close', () => {
      if (request.state === 'parked' || request.state === 'streaming') {
        request.state = 'gone';
        responses.delete(request);
        changed();
      }
    });
    changed();
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      res.destroy();
    });
  });
  const sockets = openSockets(server);
  const port = await listenLocal(server);
  origin = `http://127.0.0.1:${port}`;

  const responseOf = (request: PuppetRequest): ServerResponse => {
    const res = responses.get(request);
    if (res === undefined) throw new Error(`request #${request.seq} (${request.method} ${request.path}) is not held any more`);
    return res;
  };

  return {
    url: new URL(`${origin}/mcp`),
    origin,
    resourceMetadataUrl: `${origin}/.well-known/oauth-protected-resource/mcp`,
    requests,
    held: () => requests.filter((request) => request.state === 'parked' || request.state === 'streaming'),
    answer(request, reply) {
      const res = responseOf(request);
      if (request.state !== 'parked') throw new Error(`request #${request.seq} was already answered`);
      res.writeHead(reply.status, reply.headers ?? {});
      if (reply.stream === true) {
        request.state = 'streaming';
        res.flushHeaders();
        if (reply.body !== undefined) res.write(reply.body);
      } else {
        request.state = 'done';
        responses.delete(request);
        res.end(reply.body);
      }
      changed();
    },
    write(request, text) {
      const res = responseOf(request);
      if (request.state !== 'streaming') throw new Error(`request #${request.seq} holds no open stream`);
      res.write(text);
    },
    endStream(request) {
      const res = responseOf(request);
      request.state = 'done';
      responses.delete(request);
      res.end();
      changed();
    },
    drop(request) {
      const res = responseOf(request);
      request.state = 'gone';
      responses.delete(request);
      res.socket?.destroy();
      res.destroy();
      changed();
    },
    nextChange: () =>
      new Promise<void>((resolve) => {
        waiters.push(resolve);
      }),
    async close() {
      for (const socket of sockets) socket.destroy();
      await shutDown(server);
      changed();
    },
  };
}
