/**
 * N1-N3: the networks between client and server, on Node's own HTTP client: proxies from the
 * environment or the `proxy` option (a local CONNECT and forwarding proxy sees the traffic), TLS
 * settings (self-signed servers made with openssl, one requiring a client certificate), and
 * cookie affinity behind a sticky balancer in front of two real SDK servers.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { getGlobalDispatcher, ProxyAgent, setGlobalDispatcher } from 'undici';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { findTransportError, InvalidOptionsError, StreamableHTTPClientTransport, StreamableHTTPError } from '../../src/index.js';
import { originCookieStore } from '../../src/http/cookies.js';
import { rejection, Started, textOf } from '../support/harness.js';
import { startForwardProxy, type ForwardProxy } from '../support/forward-proxy.js';
import { selfSigned } from '../support/certs.js';
import { startStickyBalancer, type StickyBalancer } from '../support/sticky-balancer.js';
import { cleanups, runCleanups } from '../support/cleanups.js';
import type { TestServer } from '../support/mcp-server.js';

type Options = ConstructorParameters<typeof StreamableHTTPClientTransport>[1];

const started = new Started();
afterEach(async () => {
  vi.unstubAllEnvs();
  await started.closeAll();
  await runCleanups();
});

/** No proxy from the machine running the tests: each test sets what it means. */
function clearProxyEnv(): void {
  for (const name of ['http_proxy', 'HTTP_PROXY', 'https_proxy', 'HTTPS_PROXY', 'no_proxy', 'NO_PROXY']) vi.stubEnv(name, '');
}

async function proxy(): Promise<ForwardProxy> {
  const forward = await startForwardProxy();
  cleanups.push(() => forward.close());
  return forward;
}

/** A Client over a new transport for `url`, closed after the test. */
async function connect(url: URL, options: Options = {}) {
  const transport = new StreamableHTTPClientTransport(url, options);
  const client = started.client(new Client({ name: 'network', version: '0' }));
  await client.connect(transport);
  return { transport, client };
}

/** Connects, calls `echo` once and closes: every kind of request (POST, GET, DELETE) goes out. */
async function echoOnce(url: URL, options: Options = {}): Promise<void> {
  const { client } = await connect(url, options);
  expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'through' } }))).toBe('through');
  await client.close();
}

/** The server's certificate names only `mcp.test`: reached at 127.0.0.1, `servername` says which name to check. */
const server = selfSigned('mcp.test');
const clientPair = selfSigned('mcp-client');
const trustServer = { ca: server.cert, servername: 'mcp.test' };

describe('N1: proxies', () => {
  it('N1: HTTP_PROXY (lower or upper case) sends an http endpoint through the proxy as absolute-form requests; a NO_PROXY entry for 127.0.0.1 bypasses it', async () => {
    clearProxyEnv();
    const backend = await started.serve();
    const forward = await proxy();
    vi.stubEnv('http_proxy', forward.url.href);
    await echoOnce(backend.url);
    const methods = new Set(forward.forwarded.map((line) => line.split(' ')[0]));
    expect(methods).toEqual(new Set(['POST', 'GET', 'DELETE']));
    expect(forward.forwarded.every((line) => line.endsWith(` ${backend.url.href}`))).toBe(true);
    expect(forward.tunnels).toEqual([]);

    vi.stubEnv('http_proxy', '');
    vi.stubEnv('HTTP_PROXY', forward.url.href);
    const before = forward.forwarded.length;
    await echoOnce(backend.url);
    expect(forward.forwarded.length).toBeGreaterThan(before);

    // NO_PROXY: the host (with other entries and spaces around), then host:port.
    for (const exemption of ['localhost, 127.0.0.1', `example.internal,127.0.0.1:${backend.port}`]) {
      vi.stubEnv('NO_PROXY', exemption);
      const seen = forward.forwarded.length;
      const served = backend.requests.length;
      await echoOnce(backend.url);
      expect(forward.forwarded.length, exemption).toBe(seen);
      expect(backend.requests.length).toBeGreaterThan(served);
    }
    // Another port is not exempt.
    vi.stubEnv('NO_PROXY', '127.0.0.1:1');
    const seen = forward.forwarded.length;
    await echoOnce(backend.url);
    expect(forward.forwarded.length).toBeGreaterThan(seen);
  });

  it('N1, N2: HTTPS_PROXY tunnels an https endpoint with CONNECT (TLS inside the tunnel, with the tls options); NO_PROXY bypasses it', async () => {
    clearProxyEnv();
    const backend = await started.serve({ tls: server });
    const forward = await proxy();
    vi.stubEnv('HTTPS_PROXY', forward.url.href);
    // An http proxy setting is not used for an https URL.
    vi.stubEnv('HTTP_PROXY', 'http://127.0.0.1:1');
    await echoOnce(backend.url, { tls: trustServer });
    expect(forward.tunnels.length).toBeGreaterThan(0);
    expect(new Set(forward.tunnels)).toEqual(new Set([`127.0.0.1:${backend.port}`]));
    expect(forward.forwarded).toEqual([]);
    expect(new Set(backend.requests.map((r) => r.method))).toEqual(new Set(['POST', 'GET', 'DELETE']));

    vi.stubEnv('no_proxy', '127.0.0.1');
    const tunnels = forward.tunnels.length;
    const served = backend.requests.length;
    await echoOnce(backend.url, { tls: trustServer });
    expect(forward.tunnels.length).toBe(tunnels);
    expect(backend.requests.length).toBeGreaterThan(served);
  });

  it('N1: an explicit proxy option wins over the environment: a proxy URL is used despite NO_PROXY, and proxy: false goes direct despite HTTP_PROXY', async () => {
    clearProxyEnv();
    const backend = await started.serve();
    const forward = await proxy();
    vi.stubEnv('NO_PROXY', '*');
    await echoOnce(backend.url, { proxy: forward.url.href });
    expect(forward.forwarded.length).toBeGreaterThan(0);

    vi.stubEnv('NO_PROXY', '');
    vi.stubEnv('HTTP_PROXY', forward.url.href);
    const seen = forward.forwarded.length;
    await echoOnce(backend.url, { proxy: false });
    expect(forward.forwarded.length).toBe(seen);
  });
});

describe('N1, H11: a global undici dispatcher', () => {
  it('N1, H11: with a global dispatcher set (a ProxyAgent), requests keep going through fetch and that dispatcher, not the environment proxy', async () => {
    clearProxyEnv();
    const backend = await started.serve();
    const environment = await proxy();
    const dispatcherProxy = await proxy();
    vi.stubEnv('HTTP_PROXY', environment.url.href);
    const previous = getGlobalDispatcher();
    const dispatcher = new ProxyAgent(dispatcherProxy.url.href);
    setGlobalDispatcher(dispatcher);
    cleanups.push(async () => {
      setGlobalDispatcher(previous);
      await dispatcher.close();
    });
    await echoOnce(backend.url);
    expect(dispatcherProxy.tunnels.length + dispatcherProxy.forwarded.length).toBeGreaterThan(0);
    expect(environment.tunnels.length + environment.forwarded.length).toBe(0);
  });
});

describe('N2: TLS', () => {
  it('N2: a custom ca verifies a self-signed server, and servername the name on its certificate; without either the handshake is refused', async () => {
    const backend = await started.serve({ tls: server });
    await echoOnce(backend.url, { tls: trustServer });
    for (const tls of [undefined, { ca: server.cert }, { servername: 'mcp.test' }]) {
      const transport = new StreamableHTTPClientTransport(backend.url, { tls });
      const error = await rejection(new Client({ name: 'n2', version: '0' }).connect(transport));
      // F4: no response at all: the TransportFailedError onerror hears, over the StreamableHTTPError.
      expect(findTransportError(error, StreamableHTTPError), JSON.stringify(tls)).toBeInstanceOf(StreamableHTTPError);
      await transport.close();
    }
  });

  it('N2: a server that requires a client certificate accepts ours (cert, key) and refuses a client without one', async () => {
    const backend = await started.serve({ tls: { ...server, ca: clientPair.cert, requestCert: true, rejectUnauthorized: true } });
    await echoOnce(backend.url, { tls: { ...trustServer, cert: clientPair.cert, key: clientPair.key } });
    const initializes = backend.requests.length;
    expect(initializes).toBeGreaterThan(0);
    const transport = new StreamableHTTPClientTransport(backend.url, { tls: trustServer });
    const error = await rejection(new Client({ name: 'n2', version: '0' }).connect(transport));
    expect(findTransportError(error, StreamableHTTPError)).toBeInstanceOf(StreamableHTTPError);
    await transport.close();
    // The refused client never reached the MCP server.
    expect(backend.requests.length).toBe(initializes);
  });
});

describe('N1-N3: options', () => {
  it('N1, N2, N3: a bad proxy, tls or cookies value, or proxy and tls beside a fetch of the caller, throws InvalidOptionsError naming the option', () => {
    const url = new URL('http://127.0.0.1:1/mcp');
    const bad: [Options, string][] = [
      [{ proxy: 'socks5://127.0.0.1:1080' }, 'proxy'],
      [{ proxy: 'not a url' }, 'proxy'],
      [{ proxy: 3128 as unknown as string }, 'proxy'],
      [{ tls: { cert: 'PEM' } }, 'tls.cert'],
      [{ tls: { ca: 42 as unknown as string } }, 'tls.ca'],
      [{ tls: { servername: '' } }, 'tls.servername'],
      [{ cookies: 'yes' as unknown as boolean }, 'cookies'],
      [{ proxy: 'http://127.0.0.1:3128', fetch: globalThis.fetch }, 'proxy'],
      [{ tls: { ca: 'PEM' }, redirectPolicy: 'follow' }, 'tls'],
    ];
    for (const [options, name] of bad) {
      let error: unknown;
      try {
        new StreamableHTTPClientTransport(url, options);
      } catch (caught) {
        error = caught;
      }
      expect(error, name).toBeInstanceOf(InvalidOptionsError);
      expect(String(error), name).toContain(name);
    }
    // No proxy is what a fetch of the caller does anyway.
    expect(() => new StreamableHTTPClientTransport(url, { proxy: false, fetch: globalThis.fetch })).not.toThrow();
  });
});

/** Two replicas of the SDK server behind a balancer sticky by cookie. */
async function replicas(): Promise<{ servers: TestServer[]; balancer: StickyBalancer }> {
  const servers = [await started.serve(), await started.serve()];
  const balancer = await startStickyBalancer(servers.map((s) => s.url));
  cleanups.push(() => balancer.close());
  return { servers, balancer };
}

/**
 * `calls` echo calls over one transport to the balancer, as an app would make them: a call that
 * fails (the transport gave up on its session) is counted, and the Client connects again before
 * the next. Lost sessions: the replicas' 404 answers; re-initializes: every initialize but the first.
 */
async function run(calls: number, options: Options) {
  clearProxyEnv();
  const { servers, balancer } = await replicas();
  const transport = new StreamableHTTPClientTransport(balancer.url, options);
  const client = started.client(new Client({ name: 'n3', version: '0' }));
  const connected = async (): Promise<boolean> => {
    try {
      await client.connect(transport);
      return true;
    } catch {
      await client.close();
      return false;
    }
  };
  let up = await connected();
  let failed = 0;
  for (let i = 0; i < calls; i++) {
    if (!up && !(up = await connected())) {
      failed++;
      continue;
    }
    try {
      const result = await client.callTool({ name: 'echo', arguments: { text: `call ${i}` } });
      if (textOf(result) !== `call ${i}`) failed++;
    } catch {
      failed++;
      await client.close();
      up = await connected();
    }
  }
  const initializes = servers.reduce((n, s) => n + s.requests.filter((r) => r.rpc === 'initialize').length, 0);
  return { servers, balancer, client, failed, reinitialized: initializes - 1, lost: balancer.statuses.get(404) ?? 0 };
}

describe('N3: cookie affinity', () => {
  it('N3: behind a balancer sticky by cookie, 1,000 calls over two replicas lose no session and never re-initialize; POST, GET and DELETE carry the cookie', async () => {
    const { servers, balancer, client, failed, reinitialized, lost } = await run(1_000, {});
    console.info(`N3 cookies on: 1000 calls, ${failed} failed, ${lost} lost sessions (404), ${reinitialized} re-initializes`);
    expect({ failed, lost, reinitialized }).toEqual({ failed: 0, lost: 0, reinitialized: 0 });
    await client.close();
    // Only the first request came without the cookie; every later one was pinned to the replica of the session.
    expect(balancer.unpinned).toBe(1);
    const serving = servers.find((s) => s.requests.length > 1);
    const requests = serving?.requests ?? [];
    expect(new Set(requests.map((r) => r.method))).toEqual(new Set(['POST', 'GET', 'DELETE']));
    for (const request of requests.slice(1)) expect(request.headers.cookie, request.method).toMatch(/^replica=\d$/);
  });

  // Every call of this run meets a replica that does not know its session: 100 calls (1,000 take ~40 s on two busy cores).
  it('N3: with cookies: false the same run (100 calls) loses sessions and re-initializes: requests land on the replica that does not know the session', async () => {
    const { failed, reinitialized, lost } = await run(100, { cookies: false });
    console.info(`N3 cookies off: 100 calls, ${failed} failed, ${lost} lost sessions (404), ${reinitialized} re-initializes`);
    expect(lost).toBeGreaterThan(0);
    expect(reinitialized).toBeGreaterThan(0);
  }, 60_000);

  it("N3: the jar is cleared when the session ends: after close() the next session's initialize carries no cookie; a user fetch on Node keeps cookies too", async () => {
    clearProxyEnv();
    const { servers, balancer } = await replicas();
    const transport = new StreamableHTTPClientTransport(balancer.url, { fetch: (url, init) => fetch(url, init) });
    const first = started.client(new Client({ name: 'n3', version: '0' }));
    await first.connect(transport);
    for (let i = 0; i < 20; i++) await first.callTool({ name: 'echo', arguments: { text: 'x' } });
    await first.close();
    expect(balancer.unpinned).toBe(1);
    const second = started.client(new Client({ name: 'n3', version: '0' }));
    await second.connect(transport);
    await second.callTool({ name: 'echo', arguments: { text: 'x' } });
    await second.close();
    const initializes = servers.flatMap((s) => s.requests.filter((r) => r.rpc === 'initialize'));
    expect(initializes).toHaveLength(2);
    for (const initialize of initializes) expect(initialize.headers.cookie).toBeUndefined();
    expect(balancer.unpinned).toBe(2);
    expect(balancer.statuses.get(404) ?? 0).toBe(0);
  });

  it('N3: cookies are kept for the exact origin: not sent to another port or scheme of the same host, nor kept from them', async () => {
    const jar = originCookieStore(new URL('http://127.0.0.1:8080/mcp'));
    await jar.keep(new URL('http://127.0.0.1:8080/mcp'), ['a=1; Path=/', 'b=2; Expires=Wed, 21 Oct 2099 07:28:00 GMT']);
    // Answers from another origin are not kept: nothing to wait for.
    expect(jar.keep(new URL('http://127.0.0.1:9090/mcp'), ['c=3'])).toBeUndefined();
    expect(jar.keep(new URL('https://127.0.0.1:8080/mcp'), ['d=4'])).toBeUndefined();
    expect(jar.header(new URL('http://127.0.0.1:8080/mcp'))).toBe('a=1; b=2');
    expect(jar.header(new URL('http://127.0.0.1:9090/mcp'))).toBeUndefined();
    expect(jar.header(new URL('https://127.0.0.1:8080/mcp'))).toBeUndefined();
    jar.clear();
    expect(jar.header(new URL('http://127.0.0.1:8080/mcp'))).toBeUndefined();
  });
});
