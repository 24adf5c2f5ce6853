/**
 * P4: a TCP proxy on 127.0.0.1 that counts the connections it accepts and, on the way back to the
 * client, sends the end of each chunked HTTP body (`0\r\n\r\n`) in a packet of its own, a few ms
 * after the rest, as a network or a proxy may deliver it. Bytes are otherwise passed unchanged,
 * in order.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface SplitProxy {
  url(path: string): URL;
  /** TCP connections accepted from the client. */
  readonly connections: number;
  /** Body ends sent apart from the bytes before them. */
  readonly splits: number;
  close(): Promise<void>;
}

const lastChunk = Buffer.from('0\r\n\r\n');

export async function startSplitProxy(target: URL, delayMs = 5): Promise<SplitProxy> {
  const sockets = new Set<Socket>();
  let connections = 0;
  let splits = 0;
  const server: Server = createServer((client) => {
    connections++;
    client.setNoDelay(true);
    const upstream = connect(Number(target.port), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    // Chunks go back in order: each waits for the one before it (and its delayed end).
    let queue = Promise.resolve();
    upstream.on('data', (chunk: Buffer) => {
      queue = queue.then(async () => {
        const cut = chunk.length > lastChunk.length && chunk.subarray(-lastChunk.length).equals(lastChunk);
        if (!cut) {
          client.write(chunk);
          return;
        }
        splits++;
        client.write(chunk.subarray(0, -lastChunk.length));
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        client.write(lastChunk);
      });
    });
    upstream.on('end', () => {
      void queue.then(() => client.end());
    });
    client.on('end', () => upstream.end());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: (path) => new URL(path, `http://127.0.0.1:${port}`),
    get connections() {
      return connections;
    },
    get splits() {
      return splits;
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
