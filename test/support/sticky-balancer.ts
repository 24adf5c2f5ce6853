/**
 * N3: a small load balancer on 127.0.0.1 in front of several replicas, sticky by cookie as
 * common ones are (an ALB's `AWSALB`, nginx's `sticky cookie`): a request that carries the
 * `replica` cookie goes to that replica; one without it goes to the next replica in turn, and
 * its answer sets the cookie naming the replica that served it. Each replica knows only its own
 * sessions, so a session's request that lands on another replica is answered 404.
 */
import { Agent, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { forwardTo, listenLocal, shutDown } from './http.js';

export interface StickyBalancer {
  url: URL;
  /** Requests forwarded to each replica, by index. */
  routed: number[];
  /** Requests that came without a valid affinity cookie (routed in turn). */
  unpinned: number;
  /** Answers of the replicas, by status. */
  statuses: Map<number, number>;
  close(): Promise<void>;
}

const cookieName = 'replica';

/** The replica a request's `Cookie` header names, if it names one of `count`. */
function pinned(req: IncomingMessage, count: number): number | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, value] = part.trim().split('=');
    if (name !== cookieName || value === undefined) continue;
    const index = Number(value);
    if (Number.isInteger(index) && index >= 0 && index < count) return index;
  }
  return undefined;
}

/** A balancer for `replicas` (their URLs; requests keep their path and query). */
export async function startStickyBalancer(replicas: readonly URL[]): Promise<StickyBalancer> {
  const agent = new Agent({ keepAlive: true });
  const routed = replicas.map(() => 0);
  const statuses = new Map<number, number>();
  let next = 0;
  const balancer: StickyBalancer = {
    url: new URL('http://127.0.0.1'),
    routed,
    unpinned: 0,
    statuses,
    close: async () => {
      await shutDown(server);
      agent.destroy();
    },
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let index = pinned(req, replicas.length);
    const setCookie = index === undefined;
    if (index === undefined) {
      balancer.unpinned++;
      index = next;
      next = (next + 1) % replicas.length;
    }
    routed[index] = (routed[index] ?? 0) + 1;
    const target = new URL(req.url ?? '/', replicas[index]);
    forwardTo(req, res, target, {
      agent,
      headersOf: (answer) => {
        const status = answer.statusCode ?? 502;
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        const headers = { ...answer.headers };
        if (setCookie) headers['set-cookie'] = [...(answer.headers['set-cookie'] ?? []), `${cookieName}=${index}; Path=/; HttpOnly`];
        return headers;
      },
    });
  });
  const port = await listenLocal(server);
  balancer.url = new URL(`http://127.0.0.1:${port}/mcp`);
  return balancer;
}
