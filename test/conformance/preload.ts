/**
 * Preload for the conformance CLI process (`node --import tsx --import ./test/conformance/preload.ts`):
 *
 * 1. registers `fs-hooks.ts`, which gives `@modelcontextprotocol/conformance` a `fs` with the
 *    `globSync` that Node 20 lacks;
 * 2. makes every TCP server of that process listen on 127.0.0.1 when it asked for all
 *    interfaces (no host, `0.0.0.0` or `::`). The scenarios call `listen(0)` and read
 *    `server.address().port` at once, so the bind must stay synchronous: Node resolves an
 *    explicit host with `dns.lookup` on a later tick, so for the duration of that one call
 *    `dns.lookup` answers the loopback literal synchronously.
 */
import dns from 'node:dns';
import { register } from 'node:module';
import net from 'node:net';

register('./fs-hooks.ts', import.meta.url);

export const loopback = '127.0.0.1';
const wildcards = new Set(['', '0.0.0.0', '::', '::0', '0:0:0:0:0:0:0:0']);

type Listen = (this: net.Server, ...args: unknown[]) => net.Server;
type LookupCallback = (error: NodeJS.ErrnoException | null, address: string, family: number) => void;
type Lookup = (hostname: string, options: unknown, callback?: LookupCallback) => void;

const originalListen = Reflect.get(net.Server.prototype, 'listen') as Listen;
const dnsModule = dns as unknown as { lookup: Lookup };

function isWildcard(host: unknown): boolean {
  return host === undefined || host === null || (typeof host === 'string' && wildcards.has(host));
}

/** `listen(args)` rewritten to the options form on 127.0.0.1, or undefined to leave it alone (pipes, handles, named hosts). */
export function loopbackArgs(args: readonly unknown[]): unknown[] | undefined {
  const [first, ...rest] = args;
  if (typeof first === 'object' && first !== null) {
    if ('path' in first || 'handle' in first || 'fd' in first || '_handle' in first) return undefined;
    const options = first as { host?: unknown };
    if (!isWildcard(options.host)) return undefined;
    return [{ ...first, host: loopback }, ...rest];
  }
  if (typeof first === 'string' && !/^\d+$/.test(first)) return undefined; // a pipe or socket path
  const port = typeof first === 'number' || typeof first === 'string' ? first : 0;
  const remaining = typeof first === 'function' || first === undefined ? args.slice(first === undefined ? 1 : 0) : rest;
  let host: unknown;
  if (typeof remaining[0] === 'string' || remaining[0] === null || remaining[0] === undefined) {
    if (remaining.length > 0 && typeof remaining[0] !== 'function') host = remaining.shift();
  }
  if (!isWildcard(host)) return undefined;
  const backlog = typeof remaining[0] === 'number' ? remaining.shift() : undefined;
  const callback = remaining.find((arg) => typeof arg === 'function');
  const options = backlog === undefined ? { port, host: loopback } : { port, host: loopback, backlog };
  return callback === undefined ? [options] : [options, callback];
}

net.Server.prototype.listen = function listenOnLoopback(this: net.Server, ...args: unknown[]): net.Server {
  const rewritten = loopbackArgs(args);
  if (rewritten === undefined) return originalListen.apply(this, args);
  const asyncLookup = dnsModule.lookup;
  dnsModule.lookup = (hostname, options, callback) => {
    const done = typeof options === 'function' ? (options as LookupCallback) : callback;
    if (hostname === loopback && done !== undefined) {
      done(null, loopback, 4);
      return;
    }
    asyncLookup(hostname, options, callback);
  };
  try {
    return originalListen.apply(this, rewritten);
  } finally {
    dnsModule.lookup = asyncLookup;
  }
} as typeof net.Server.prototype.listen;
