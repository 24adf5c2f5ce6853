/**
 * N7: a TCP proxy on 127.0.0.1 in front of a real server that plays the keep-alive race: the
 * server closing a connection exactly as the client's next request goes out on it. Bytes pass
 * unchanged unless the proxy's `fault` says otherwise:
 * - 'close-reused': a request arriving on a connection that already carried an answer is not
 *   forwarded; the connection is closed (`how`: a FIN, or a reset): an idle keep-alive connection
 *   the server closed under the request;
 * - 'close-fresh': the same for the first request of every connection (a fresh connection);
 * - 'cut-reused-answer': a request on a reused connection is forwarded, and of its answer only the
 *   first byte is sent before the connection is reset.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export type StaleFault = 'none' | 'close-reused' | 'close-fresh' | 'cut-reused-answer';

export interface StaleProxy {
  url(path: string): URL;
  fault: StaleFault;
  how: 'fin' | 'reset';
  /** TCP connections accepted from the client. */
  readonly connections: number;
  /** Requests passed on to the server (counted by the start of each request's first packet). */
  readonly forwarded: number;
  /** Connections closed under a request by a fault. */
  readonly closed: number;
  close(): Promise<void>;
}

const requestStart = /^(GET|POST|DELETE|PUT|HEAD|OPTIONS) /;

export async function startStaleProxy(target: URL): Promise<StaleProxy> {
  const sockets = new Set<Socket>();
  let connections = 0;
  let forwarded = 0;
  let closed = 0;
  const state: { fault: StaleFault; how: 'fin' | 'reset' } = { fault: 'none', how: 'fin' };
  const kill = (socket: Socket) => {
    closed++;
    if (state.how === 'reset') socket.resetAndDestroy();
    else socket.destroy();
  };
  const server: Server = createServer((client) => {
    connections++;
    client.setNoDelay(true);
    const upstream = connect(Number(target.port), target.hostname);
    /** The server has answered on this connection (it is a reused one for the next request). */
    let answered = false;
    let cutNext = false;
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => {
        sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      const starts = requestStart.test(chunk.toString('latin1', 0, 8));
      if (starts) {
        const fault = state.fault;
        if ((fault === 'close-reused' && answered) || (fault === 'close-fresh' && !answered)) {
          kill(client);
          upstream.destroy();
          return;
        }
        cutNext = fault === 'cut-reused-answer' && answered;
        forwarded++;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      answered = true;
      if (cutNext) {
        client.write(chunk.subarray(0, 1), () => {
          kill(client);
          upstream.destroy();
        });
        return;
      }
      client.write(chunk);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: (path) => new URL(path, `http://127.0.0.1:${port}`),
    get fault() {
      return state.fault;
    },
    set fault(fault: StaleFault) {
      state.fault = fault;
    },
    get how() {
      return state.how;
    },
    set how(how: 'fin' | 'reset') {
      state.how = how;
    },
    get connections() {
      return connections;
    },
    get forwarded() {
      return forwarded;
    },
    get closed() {
      return closed;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
    },
  };
}
