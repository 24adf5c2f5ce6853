/**
 * F4: a TCP front on 127.0.0.1 for a test server that can go down and come back on the same port.
 * Down, nothing listens there: every connection is refused (ECONNREFUSED), as when a server
 * process is stopped or restarting; the connections it had are destroyed. Up, bytes pass to the
 * target unchanged, in order.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface OutageFront {
  /** `target`'s path and query, on the front's port. */
  url: URL;
  readonly port: number;
  /** Stops listening (connections refused) and destroys every open connection. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  readonly isUp: boolean;
  /** Connections accepted while up. */
  readonly connections: number;
  close(): Promise<void>;
}

export async function startOutageFront(target: URL): Promise<OutageFront> {
  const sockets = new Set<Socket>();
  let connections = 0;
  let server: Server | undefined;
  let port = 0;

  const listen = async (): Promise<void> => {
    const next = createServer((client) => {
      connections++;
      const upstream = connect(Number(target.port), target.hostname);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.on('close', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => {
        resolve();
      });
    });
    const address = next.address();
    if (address === null || typeof address === 'string') throw new Error('outage front: no port');
    port = address.port;
    server = next;
  };

  const stop = async (): Promise<void> => {
    const current = server;
    server = undefined;
    if (current === undefined) return;
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) =>
      current.close(() => {
        resolve();
      }),
    );
  };

  await listen();
  const url = new URL(target.href);
  url.port = String(port);
  return {
    url,
    get port() {
      return port;
    },
    down: stop,
    up: listen,
    get isUp() {
      return server !== undefined;
    },
    get connections() {
      return connections;
    },
    close: stop,
  };
}
