/**
 * N3: cookie affinity. A transport's jar keeps the `Set-Cookie` of every answer from its
 * endpoint's exact origin (scheme, host and port) and hands them back on later requests to that
 * origin, until the chart says the session ended. The parsing and matching (expiry, path,
 * `Secure`, `Max-Age`, …) are `tough-cookie`'s, loaded with the first cookie a server sets: a
 * client whose server sets none never loads it. Only the Node entry registers this module
 * (src/node.ts); a browser keeps its own cookies.
 */
import type * as ToughCookie from 'tough-cookie';

/** What the HTTP client needs of a jar. */
export interface CookieStore {
  /** The `Cookie` header for a request to `url`, or undefined when no cookie goes there. */
  header(url: URL): string | undefined;
  /** Keeps the cookies an answer from `url` set; a promise only while the library loads, the first time. */
  keep(url: URL, setCookies: readonly string[]): Promise<void> | undefined;
  /** Forgets every cookie (the session ended). */
  clear(): void;
}

let tough: typeof ToughCookie | undefined;

async function loadToughCookie(): Promise<typeof ToughCookie> {
  tough ??= await import('tough-cookie');
  return tough;
}

/** One transport's jar, for its endpoint's origin only. */
class OriginCookies implements CookieStore {
  private jar: ToughCookie.CookieJar | undefined;
  private readonly origin: string;

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
}

/** N3: a new jar for the transport of `endpoint`. */
export function originCookieStore(endpoint: URL): CookieStore {
  return new OriginCookies(endpoint);
}
