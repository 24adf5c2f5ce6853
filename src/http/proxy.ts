/// <reference types="node" />
/**
 * N1: a Node client's proxy choice (the `proxy` option, or the environment's `HTTPS_PROXY`,
 * `HTTP_PROXY` and `NO_PROXY` as curl reads them) and the proxy agents that carry a proxied
 * request. Only the Node client (src/http/node.ts) imports this module.
 */
import type http from 'node:http';

/**
 * N1: the proxy agents (`https-proxy-agent`: CONNECT tunnels for https; `http-proxy-agent`:
 * absolute-form requests for http), loaded only when a request goes through a proxy. One agent
 * per proxy and scheme, shared like the direct agents, so tunnels are kept alive and reused.
 */
type ProxyAgentClass = new (proxy: URL, options: http.AgentOptions) => http.Agent;
interface ProxyModules {
  https: { HttpsProxyAgent: ProxyAgentClass };
  http: { HttpProxyAgent: ProxyAgentClass };
}
let proxyModules: ProxyModules | undefined;
const proxyAgents = new Map<string, http.Agent>();

// A name in a variable (as src/live.ts): the CommonJS build leaves these ESM-only packages to Node's loader.
// The comments: webpack would make a context module of the expression and warn 'Critical dependency'; Vite before 8 warns too.
const load = (name: string): Promise<unknown> => import(/* webpackIgnore: true */ /* @vite-ignore */ name);

/** Loads both proxy agent packages once; a request through a proxy waits for this first (`proxyAgentsLoaded`). */
export async function loadProxyAgents(): Promise<void> {
  try {
    const [httpsModule, httpModule] = (await Promise.all([load('https-proxy-agent'), load('http-proxy-agent')])) as [
      ProxyModules['https'],
      ProxyModules['http'],
    ];
    proxyModules ??= { https: httpsModule, http: httpModule };
  } catch (cause) {
    // Fails the request as a network failure would, saying what is missing.
    throw new TypeError('fetch failed: a proxy is set, and https-proxy-agent and http-proxy-agent could not be loaded', { cause });
  }
}

/** Whether `loadProxyAgents()` has loaded the packages. */
export function proxyAgentsLoaded(): boolean {
  return proxyModules !== undefined;
}

/** The agent for requests to `scheme` URLs through `proxy` (with the direct agents' `keepAlive`); the modules must be loaded. */
export function proxyAgent(proxy: URL, scheme: string, keepAlive: http.AgentOptions): http.Agent {
  const modules = proxyModules;
  if (modules === undefined) throw new TypeError('fetch failed: the proxy agents are not loaded');
  const key = `${scheme}${proxy.href}`;
  let agent = proxyAgents.get(key);
  if (agent === undefined) {
    agent = scheme === 'https:' ? new modules.https.HttpsProxyAgent(proxy, keepAlive) : new modules.http.HttpProxyAgent(proxy, keepAlive);
    proxyAgents.set(key, agent);
  }
  return agent;
}

/** N1: where a transport's requests go, by the URL's scheme: through a proxy, or direct (undefined). */
export type ProxyFor = (url: URL) => URL | undefined;

export const noProxy: ProxyFor = () => undefined;

/** A variable in lower case, else in upper case (as curl reads them); an empty one is unset. */
function envValue(env: NodeJS.ProcessEnv, name: string): string | undefined {
  for (const value of [env[name.toLowerCase()], env[name.toUpperCase()]]) {
    if (value !== undefined && value.trim() !== '') return value.trim();
  }
  return undefined;
}

/** An environment proxy as a URL (a bare `host:port` is taken as http://); a value that is no URL is ignored, as curl ignores it. */
function envProxyUrl(value: string | undefined): URL | undefined {
  if (value === undefined) return undefined;
  try {
    const url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** A host as NO_PROXY entries name it: lower case, no IPv6 brackets, no trailing dot. */
function bareHost(host: string): string {
  return host
    .toLowerCase()
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '');
}

/**
 * N1: whether `NO_PROXY` exempts `url`, as curl and Go read it: `*` exempts every host; an entry
 * exempts its host and the host's subdomains (a leading `.` or `*.` is the same); `host:port`
 * only that port. IP addresses are compared as text (no CIDR ranges).
 */
function exempt(noProxyList: readonly string[], url: URL): boolean {
  const host = bareHost(url.hostname);
  const port = url.port === '' ? (url.protocol === 'https:' ? '443' : '80') : url.port;
  for (const raw of noProxyList) {
    if (raw === '*') return true;
    let entry = raw;
    let entryPort: string | undefined;
    const bracketed = /^\[([^\]]*)\](?::(\d+))?$/.exec(raw);
    if (bracketed !== null) [, entry = '', entryPort] = bracketed;
    // One colon is `host:port`; more are an IPv6 address without brackets.
    else if (raw.indexOf(':') !== -1 && raw.indexOf(':') === raw.lastIndexOf(':')) [entry = '', entryPort] = raw.split(':');
    if (entryPort !== undefined && entryPort !== port) continue;
    entry = bareHost(entry).replace(/^\*?\./, '');
    if (entry !== '' && (host === entry || host.endsWith(`.${entry}`))) return true;
  }
  return false;
}

/**
 * N1: a transport's proxy choice. An explicit `proxy` carries every request; `false`, none;
 * otherwise the environment as the transport was made: `HTTPS_PROXY` for https URLs,
 * `HTTP_PROXY` for http ones (lower case first, as curl reads them), unless `NO_PROXY` exempts
 * the host.
 */
export function proxyChoice(option: URL | false | undefined, env: NodeJS.ProcessEnv): ProxyFor {
  if (option === false) return noProxy;
  if (option !== undefined) return () => option;
  const httpsProxy = envProxyUrl(envValue(env, 'https_proxy'));
  const httpProxy = envProxyUrl(envValue(env, 'http_proxy'));
  if (httpsProxy === undefined && httpProxy === undefined) return noProxy;
  const exemptions = (envValue(env, 'no_proxy') ?? '')
    .split(/[\s,]+/)
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  return (url) => {
    const proxy = url.protocol === 'https:' ? httpsProxy : httpProxy;
    return proxy === undefined || exempt(exemptions, url) ? undefined : proxy;
  };
}
