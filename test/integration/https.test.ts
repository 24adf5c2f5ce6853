/**
 * H11: an https URL on the Node client goes over TLS. `node:https` loads on first use (it is not
 * in the cold start of a client that never needs it), so this proves the first https request
 * waits for it and really speaks TLS. The server here is plain TCP: it records the first bytes
 * (a TLS record starts 0x16 0x03) and hangs up, so the handshake fails with a typed error.
 */
import { createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { findTransportError, StreamableHTTPClientTransport, StreamableHTTPError, TransportFailedError } from '../../src/index.js';
import { causeChain, within } from '../support/harness.js';

const sockets = new Set<Socket>();
const server = createServer((socket) => {
  sockets.add(socket);
  socket.once('data', (bytes) => {
    firstBytes.push(bytes.subarray(0, 2));
    socket.destroy();
  });
  socket.on('close', () => sockets.delete(socket));
});
const firstBytes: Buffer[] = [];

afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) =>
    server.close(() => {
      resolve();
    }),
  );
});

describe('H11: https', () => {
  it('H11: an https URL is requested over TLS (node:https loaded on first use); a failed handshake fails connect with TransportFailedError over StreamableHTTPError (F4)', async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    const transport = new StreamableHTTPClientTransport(new URL(`https://127.0.0.1:${port}/mcp`));
    const client = new Client({ name: 'h11-https', version: '0' });
    const error = await within(
      client.connect(transport).then(
        () => undefined,
        (e: unknown) => e,
      ),
      'connect over https to a server that hangs up',
    );
    expect(error).toBeInstanceOf(TransportFailedError);
    expect(findTransportError(error, StreamableHTTPError)?.status).toBeUndefined();
    expect(causeChain(error).some((cause) => cause instanceof Error)).toBe(true);
    expect(firstBytes.length).toBeGreaterThan(0);
    // A TLS handshake record: content type 22, major version 3.
    expect([...(firstBytes[0] ?? Buffer.alloc(0))]).toEqual([0x16, 0x03]);
    await client.close();
  });
});
