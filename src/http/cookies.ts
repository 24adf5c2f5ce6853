/**
 * N3: cookie affinity. A transport's jar keeps the `Set-Cookie` of every answer from its
 * endpoint's exact origin (scheme, host and port) and hands them back on later requests to that
 * origin, until the chart says the session ended. The parsing and matching (expiry, path,
 * `Secure`, `Max-Age`, …) are `tough-cookie`'s, loaded with the first cookie a server sets: a
 * client whose server sets none never loads it. Only the Node entry registers this module
 * (src/node.ts); a browser keeps its own cookies.
 */
import type * as ToughCookie from 'tough-cookie';
import type { HttpResponse, HttpSend, RequestControl } from './client.js';

/** What the HTTP client needs of a jar. */
export interface CookieStore {
  /** The `Cookie` header for a request to `url`, or undefined when no cookie goes there. */
  header(url: URL): string | undefined;
  /** Keeps the cookies an answer from `url` set; a promise only while the library loads, the first time. */
  keep(url: URL, setCookies: readonly string[]): Promise<void> | undefined;
  /** Forgets every cookie (the session ended). */
  clear(): void;
  /** `send` with this jar: its cookies go out on each request, each answer's `Set-Cookie` is kept. */
  wrap(send: HttpSend): HttpSend;
}

let tough: typeof ToughCookie | undefined;

async function loadToughCookie(): Promise<typeof ToughCookie> {
  tough ??= await import('tough-cookie');
  return tough;
}

const missingSend: HttpSend = () => Promise.reject(new TypeError('cookie jar used before wrap()'));

/** One transport's jar, for its endpoint's origin only. */
class OriginCookies implements CookieStore {
  private jar: ToughCookie.CookieJar | undefined;
  private readonly origin: string;
  /** The sender `wrap` was given. */
  private inner: HttpSend = missingSend;

  constructor(endpoint: URL) {
    this.origin = endpoint.origin;
  }

  header(url: URL): string | undefined {
    if (this.jar === undefined || url.origin !== this.origin) return undefined;
    const cookie = this.jar.getCookieStringSync(url);
    return cookie === '' ? undefined : cookie;
  }

  keep(url: URL, setCookies: readonly string[]): Promise<void> | undefined {
    if (setCookies.length === 0 || url.origin !== this.origin) return undefined;
    if (tough === undefined) {
      // Without the library (not installed), no cookie is kept and the answer goes on as it came.
      return loadToughCookie().then(
        (library) => {
          this.store(library, url, setCookies);
        },
        () => undefined,
      );
    }
    this.store(tough, url, setCookies);
    return undefined;
  }

  private store(library: typeof ToughCookie, url: URL, setCookies: readonly string[]): void {
    this.jar ??= new library.CookieJar();
    // A cookie the library refuses (a bad Domain, a malformed line) is dropped, as a browser drops it.
    for (const line of setCookies) this.jar.setCookieSync(line, url, { ignoreError: true });
  }

  clear(): void {
    this.jar = undefined;
  }

  wrap(send: HttpSend): HttpSend {
    this.inner = send;
    return this.send.bind(this);
  }

  /** What `wrap` returns, bound: `send` with this jar (the jar is the sender, not a closure per transport). */
  private send(url: URL, init: RequestInit, control?: RequestControl): Promise<HttpResponse> {
    return withCookies(this.inner, this, url, init, control);
  }
}

/** N3: a new jar for the transport of `endpoint`. */
export function originCookieStore(endpoint: URL): CookieStore {
  return new OriginCookies(endpoint);
}

/**
 * N3: `send` with the cookie jar: each request (a followed redirect too) carries the jar's
 * cookies for its URL after the caller's own, and each response's `Set-Cookie` is kept before
 * the response is handed on, so the next request carries it.
 */
function withCookies(
  send: HttpSend,
  jar: CookieStore,
  url: URL,
  init: RequestInit,
  control: RequestControl | undefined,
): Promise<HttpResponse> {
  const cookie = jar.header(url);
  let sent = init;
  if (cookie !== undefined) {
    // Copies: a followed redirect is sent with the same init, and must not carry the cookies twice.
    const headers: Record<string, string> = Object.assign({}, init.headers as Record<string, string> | undefined);
    const own = headers.cookie;
    headers.cookie = own === undefined || own === '' ? cookie : `${own}; ${cookie}`;
    sent = Object.assign({}, init);
    sent.headers = headers;
  }
  return send(url, sent, control).then((response) => {
    const kept = jar.keep(url, setCookiesOf(response));
    return kept === undefined ? response : kept.then(() => response);
  });
}

/** Each `Set-Cookie` field of a response: from `getSetCookie()` when the response has it, else split from the joined value. */
function setCookiesOf(response: HttpResponse): readonly string[] {
  if (typeof response.headers.getSetCookie === 'function') return response.headers.getSetCookie();
  const joined = response.headers.get('set-cookie');
  // A comma starts a new cookie only before `name=`: an Expires date's comma ("Wed, 21 Oct …") does not.
  return joined === null ? [] : joined.split(/,\s*(?=[^;,=\s]+=)/);
}
