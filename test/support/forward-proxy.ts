/**
 * A small HTTP proxy on 127.0.0.1 that counts what passes through it: CONNECT tunnels (what
 * undici's ProxyAgent opens) and absolute-URI forwarded requests. Targets must be loopback.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { forwardTo } from './http.js';

export interface ForwardProxy {
  url: URL;
  /** CONNECT tunnels opened, by target `host:port`. */
  tunnels: string[];
  /** Requests forwarded as `METHOD absolute-url`. */
  forwarded: string[];
  close(): Promise<void>;
}

function isLoopback(host: string): boolean {
  return host === '127.0.0.1' || host === '::1' || host === '[::1]' || host === 'localhost';
}

export async function startForwardProxy(): Promise<ForwardProxy> {
  const tunnels: string[] = [];
  const forwarded: string[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((req: IncomingMessage, res) => {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res.writeHead(400).end('absolute URI expected');
      return;
    }
    if (!isLoopback(target.hostname)) {
      res.writeHead(403).end('loopback only');
      return;
    }
    forwarded.push(`${req.method ?? 'GET'} ${target.href}`);
    forwardTo(req, res, target);
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    const [host = '', port = ''] = (req.url ?? '').split(/:(?=\d+$)/);
    if (!isLoopback(host)) {
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
      return;
    }
    tunnels.push(req.url ?? '');
    const upstream = connect(Number(port), host.replace(/^\[|\]$/g, ''), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    sockets.add(upstream);
    upstream.on('close', () => sockets.delete(upstream));
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}`),
    tunnels,
    forwarded,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => {
          resolve();
        });
      }),
  };
}
