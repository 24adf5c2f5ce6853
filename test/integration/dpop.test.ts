/**
 * A5: DPoP (RFC 9449) on every request the transport makes, checked by a resource server's front
 * that verifies each proof with `jose` (test/support/dpop-front.ts) before the SDK's real server
 * sees it: under the 1.x Client with the `dpop` option, under the v2 Client with its provider's
 * `DpopSession`, on the legacy HTTP+SSE transport, and with a server that asks for nonces.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as V2Client, DpopSession } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '../../src/index.js';
import { startServer } from '../support/mcp-server.js';
import { startLegacyServer } from '../support/legacy-server.js';
import { startDpopFront, type DpopFront, type DpopRecord } from '../support/dpop-front.js';
import { realFetch, rejection, textOf, until } from '../support/harness.js';
import { cleanups, runCleanups } from '../support/cleanups.js';

afterEach(runCleanups);

const token = 'dpop-bound-access-token-0123456789';
/** A provider with a DPoP-bound token, as an app that obtained one holds it (the 1.x SDK's auth() asks for none). */
const dpopProvider = { tokens: () => ({ access_token: token, token_type: 'DPoP' }) };

async function front(backend: URL, options: { nonce?: string; allowBearer?: boolean; stubborn?: boolean } = {}): Promise<DpopFront> {
  const started = await startDpopFront(backend, { token, ...options });
  cleanups.push(() => started.close());
  return started;
}

async function sdkServer() {
  const server = await startServer();
  cleanups.push(() => server.close());
  return server;
}

const verified = (records: DpopRecord[]) => records.filter((r) => r.problem === undefined && r.scheme === 'DPoP');

describe('A5: DPoP', () => {
  it('A5: 1.x Client with the dpop option: every POST, GET and DELETE carries a fresh proof that verifies; jti unique over 100 calls; htu without the query; ath of the token', async () => {
    const server = await sdkServer();
    const backend = new URL(server.url);
    backend.search = '?tenant=a&x=1';
    const resource = await front(backend);
    expect(resource.url.search).toBe('?tenant=a&x=1');
    const transport = new StreamableHTTPClientTransport(resource.url, { authProvider: dpopProvider, dpop: true });
    const client = new Client({ name: 'a5', version: '1.0.0' });
    await client.connect(transport);
    for (let i = 0; i < 100; i++) {
      expect(textOf(await client.callTool({ name: 'echo', arguments: { text: `call ${i}` } }))).toBe(`call ${i}`);
    }
    await until(() => resource.records.some((r) => r.method === 'GET'), 'the standalone GET');
    await client.close();
    await until(() => resource.records.some((r) => r.method === 'DELETE'), 'the DELETE');

    expect(resource.problems()).toEqual([]);
    const proved = verified(resource.records);
    expect(proved.length).toBe(resource.records.length);
    expect(proved.length).toBeGreaterThanOrEqual(103);
    expect(new Set(proved.map((r) => r.method))).toEqual(new Set(['POST', 'GET', 'DELETE']));
    expect(new Set(proved.map((r) => r.jti)).size).toBe(proved.length);
    expect(new Set(proved.map((r) => r.htu))).toEqual(new Set([`${resource.url.origin}${resource.url.pathname}`]));
    // One key for the transport's life (the session's), made once.
    expect(new Set(proved.map((r) => r.thumbprint)).size).toBe(1);
    // The server really got the calls (the front forwarded them).
    expect(server.requests.filter((r) => r.rpc === 'tools/call')).toHaveLength(100);
  });

  it('A5: a use_dpop_nonce challenge is retried exactly once with a new proof carrying the nonce; a DPoP-Nonce on a 200 is used next', async () => {
    const server = await sdkServer();
    const resource = await front(server.url, { nonce: 'nonce-one' });
    const transport = new StreamableHTTPClientTransport(resource.url, { authProvider: dpopProvider, dpop: true, standaloneStream: false });
    const client = new Client({ name: 'a5', version: '1.0.0' });
    await client.connect(transport);
    await client.callTool({ name: 'echo', arguments: { text: 'one' } });
    resource.rotate('nonce-two');
    await client.callTool({ name: 'echo', arguments: { text: 'announces the next nonce' } });
    await client.callTool({ name: 'echo', arguments: { text: 'uses it' } });
    await client.close();

    expect(resource.problems()).toEqual([]);
    const { records } = resource;
    // The first request met the challenge; its retry carried the nonce; nothing else was refused.
    expect(records.filter((r) => r.refused !== undefined)).toHaveLength(1);
    const [challenged, retried] = records;
    expect(challenged?.refused).toBe(401);
    expect(challenged?.nonce).toBeUndefined();
    expect(retried?.method).toBe(challenged?.method);
    expect(retried?.nonce).toBe('nonce-one');
    expect(retried?.jti).not.toBe(challenged?.jti);
    // The nonce announced on a 200 went into the very next proof.
    const nonces = records.map((r) => r.nonce);
    const announced = nonces.indexOf('nonce-two');
    expect(announced).toBeGreaterThan(1);
    expect(nonces.slice(announced).every((n) => n === 'nonce-two')).toBe(true);
    expect(records.at(-1)?.method).toBe('DELETE');
  });

  it('A5: a server that answers use_dpop_nonce to every proof: the request goes out twice (the retry carries the nonce), not more', async () => {
    const server = await sdkServer();
    const resource = await front(server.url, { stubborn: true });
    const transport = new StreamableHTTPClientTransport(resource.url, { authProvider: dpopProvider, dpop: true });
    const client = new Client({ name: 'a5', version: '1.0.0' });
    // The second 401 goes on to the chart (A1: the SDK's auth(), which this bare provider cannot run): connect fails.
    await rejection(client.connect(transport));
    await client.close();
    expect(resource.problems()).toEqual([]);
    expect(resource.records.map((r) => [r.method, r.nonce, r.refused])).toEqual([
      ['POST', undefined, 401],
      ['POST', 'nonce-1', 401],
    ]);
    expect(server.requests).toHaveLength(0);
  });

  it('A5, L1: the legacy HTTP+SSE transport: its GET stream and every POST to its endpoint carry a fresh proof; htu has no query', async () => {
    const legacy = await startLegacyServer();
    cleanups.push(() => legacy.close());
    const resource = await front(legacy.url);
    const transport = new StreamableHTTPClientTransport(resource.url, { authProvider: dpopProvider, dpop: true });
    const client = new Client({ name: 'a5', version: '1.0.0' });
    await client.connect(transport);
    for (let i = 0; i < 5; i++) await client.callTool({ name: 'echo', arguments: { text: `old ${i}` } });
    await client.close();

    expect(resource.problems()).toEqual([]);
    const posts = resource.records.filter((r) => r.method === 'POST' && r.url.startsWith('/messages?'));
    expect(posts.length).toBeGreaterThanOrEqual(7);
    for (const post of posts) expect(post.htu).toBe(`${resource.url.origin}/messages`);
    expect(resource.records.some((r) => r.method === 'GET' && r.scheme === 'DPoP')).toBe(true);
    const proved = verified(resource.records);
    expect(proved).toHaveLength(resource.records.length);
    expect(new Set(proved.map((r) => r.jti)).size).toBe(proved.length);
  });

  it("A5: the v2 Client with a provider's dpop(): the proofs are signed by the provider's DpopSession", async () => {
    const server = await sdkServer();
    const resource = await front(server.url, { nonce: 'v2-nonce' });
    const session = await DpopSession.create();
    const provider = { tokens: () => ({ access_token: token, token_type: 'dpop' }), dpop: () => session };
    const client = new V2Client({ name: 'a5', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(resource.url, { authProvider: provider }));
    for (let i = 0; i < 10; i++) await client.callTool({ name: 'echo', arguments: { text: `v2 ${i}` } });
    await client.close();

    expect(resource.problems()).toEqual([]);
    const proved = verified(resource.records);
    expect(new Set(proved.map((r) => r.thumbprint))).toEqual(new Set([session.thumbprint]));
    expect(new Set(proved.map((r) => r.method))).toEqual(new Set(['POST', 'GET', 'DELETE']));
    expect(new Set(proved.map((r) => r.jti)).size).toBe(proved.length);
    // The session kept the nonce for the origin (the SDK's own per-origin slot).
    expect(session.nonceFor(resource.url)).toBe('v2-nonce');
    expect(resource.records.filter((r) => r.refused !== undefined)).toHaveLength(1);
  });

  it('A5: a Bearer token stays Bearer, with DPoP on (the v2 provider and the dpop option): no proof goes out', async () => {
    const server = await sdkServer();
    const resource = await front(server.url, { allowBearer: true });
    const bearer = { tokens: () => ({ access_token: token, token_type: 'Bearer' }) };
    const session = await DpopSession.create();
    const v1 = new Client({ name: 'a5', version: '1.0.0' });
    await v1.connect(new StreamableHTTPClientTransport(resource.url, { authProvider: bearer, dpop: true }));
    await v1.callTool({ name: 'echo', arguments: { text: 'bearer' } });
    await v1.close();
    const v2 = new V2Client({ name: 'a5', version: '1.0.0' });
    await v2.connect(new StreamableHTTPClientTransport(resource.url, { authProvider: { ...bearer, dpop: () => session } }));
    await v2.callTool({ name: 'echo', arguments: { text: 'bearer' } });
    await v2.close();

    expect(resource.problems()).toEqual([]);
    expect(resource.records.length).toBeGreaterThan(6);
    expect(resource.records.every((r) => r.scheme === 'Bearer' && r.proof === undefined)).toBe(true);
  });

  it('A5: the check can fail: the front refuses a proof presented twice', async () => {
    const server = await sdkServer();
    const resource = await front(server.url);
    const session = await DpopSession.create();
    const proof = await session.buildProof({ htm: 'POST', htu: resource.url, accessToken: token });
    const headers = {
      authorization: `DPoP ${token}`,
      dpop: proof,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    };
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
    const first = await realFetch(resource.url, { method: 'POST', headers, body });
    await first.body?.cancel();
    const second = await realFetch(resource.url, { method: 'POST', headers, body });
    await second.body?.cancel();
    expect(second.status).toBe(401);
    expect(resource.problems()).toEqual([`POST ${resource.url.pathname}: jti ${resource.records[0]?.jti ?? ''} used before`]);
  });
});
