import type { HttpResponse, HttpSend } from './client.js';
import type { DpopKeyPair, DpopOption, DpopSessionLike } from './dpop-option.js';
// Named imports, not `import('jose')`: a whole namespace would make a bundler put a helper in a
// chunk shared with the page's code, splitting the eager bundle in two files.
import { exportJWK, generateKeyPair, SignJWT } from 'jose';

/**
 * A5: DPoP (RFC 9449, MCP's SEP-1932) on the transport's own requests. Loaded with `import()` the
 * first time a request goes out with a DPoP-bound token, so a transport without DPoP carries none
 * of it (and none of `jose`, which it imports). Like the SDK's `withDpop`, it wraps the sender: each request (each
 * redirect hop too) gets its own proof for its method and URL, a `use_dpop_nonce` challenge is
 * answered once with a new proof carrying the nonce, and a `DPoP-Nonce` on any answer is kept for
 * the next proof to that origin. Proofs, keys and nonces stay here and in the headers of the
 * request they go with: never chart context, an event, a log line or an error (X3).
 */

/** What the sender around the transport's own client needs: the session that signs, and how to cancel an unread body. */
export interface DpopKit {
  discardBody(response: HttpResponse): void;
}

const isSession = (value: object): value is DpopSessionLike =>
  typeof (value as { buildProof?: unknown }).buildProof === 'function' &&
  typeof (value as { rememberNonce?: unknown }).rememberNonce === 'function';

/** RFC 9449 §4.2: `htu` is the target URI without query and fragment. */
function targetUri(url: URL): string {
  return `${url.origin}${url.pathname}`;
}

/** The JWS algorithm a WebCrypto key signs with. */
function algorithmOf(key: CryptoKey): string {
  const algorithm = key.algorithm as { name: string; namedCurve?: string; hash?: { name: string } };
  const bits = (algorithm.hash?.name ?? 'SHA-256').replace('SHA-', '');
  switch (algorithm.name) {
    case 'ECDSA':
      return algorithm.namedCurve === 'P-384' ? 'ES384' : algorithm.namedCurve === 'P-521' ? 'ES512' : 'ES256';
    case 'Ed25519':
    case 'EdDSA':
      return 'EdDSA';
    case 'RSASSA-PKCS1-v1_5':
      return `RS${bits}`;
    case 'RSA-PSS':
      return `PS${bits}`;
    default:
      throw new TypeError(`dpop: a ${algorithm.name} key cannot sign a DPoP proof (an asymmetric signing key is needed)`);
  }
}

/**
 * The 1.x path's session (the `dpop` option's key pair, or one made for it): proofs made with
 * `jose` exactly as the v2 SDK's `DpopSession` makes them, and the newest nonce per origin.
 */
class KeyPairSession implements DpopSessionLike {
  private readonly nonces = new Map<string, string>();
  private signer: Promise<{ alg: string; jwk: object; key: CryptoKey }> | undefined;

  constructor(private readonly given: DpopKeyPair | undefined) {}

  rememberNonce(url: string | URL, nonce: string): void {
    this.nonces.set(new URL(url).origin, nonce);
  }

  async buildProof(request: { htm: string; htu: string | URL; accessToken?: string }): Promise<string> {
    const { alg, jwk, key } = await (this.signer ??= this.makeSigner());
    const htu = new URL(request.htu);
    const payload: Record<string, unknown> = {
      jti: base64url(crypto.getRandomValues(new Uint8Array(16))),
      htm: request.htm.toUpperCase(),
      htu: targetUri(htu),
      iat: Math.floor(Date.now() / 1000),
    };
    if (request.accessToken !== undefined) {
      payload.ath = base64url(new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(request.accessToken))));
    }
    const nonce = this.nonces.get(htu.origin);
    if (nonce !== undefined) payload.nonce = nonce;
    return new SignJWT(payload).setProtectedHeader({ alg, typ: 'dpop+jwt', jwk }).sign(key);
  }

  private async makeSigner(): Promise<{ alg: string; jwk: object; key: CryptoKey }> {
    const pair = this.given ?? (await generateKeyPair('ES256', { extractable: false }));
    const alg = this.given?.alg ?? algorithmOf(pair.privateKey);
    // Only the public members: a private key's `d` never goes into a proof.
    const { kty, crv, x, y, n, e } = await exportJWK(pair.publicKey);
    const jwk = Object.fromEntries(Object.entries({ kty, crv, x, y, n, e }).filter(([, value]) => value !== undefined));
    return { alg, jwk, key: pair.privateKey };
  }
}

function base64url(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The session the `dpop` option stands for, made once per transport. */
export function sessionOf(option: DpopOption): DpopSessionLike {
  if (option === true) return new KeyPairSession(undefined);
  return isSession(option) ? option : new KeyPairSession(option);
}

/** RFC 9449 §9: a resource server's `401` with a `DPoP` challenge whose error is `use_dpop_nonce`, and a nonce to use. */
function nonceChallenge(response: HttpResponse): string | undefined {
  if (response.status !== 401) return undefined;
  const challenge = response.headers.get('www-authenticate') ?? '';
  if (!/(?:^|,)\s*dpop(?:\s|$|,)/i.test(challenge) || !/use_dpop_nonce/i.test(challenge)) return undefined;
  return response.headers.get('dpop-nonce') ?? undefined;
}

/**
 * `send` with DPoP: `Authorization: DPoP <token>` and a fresh proof on each request; one retry
 * with a new proof after a `use_dpop_nonce` challenge; every `DPoP-Nonce` remembered.
 */
export function dpopSender(send: HttpSend, session: DpopSessionLike, accessToken: string, kit: DpopKit): HttpSend {
  return async (url, init, control) => {
    const htm = (init.method ?? 'GET').toUpperCase();
    const signed = async (): Promise<RequestInit> => {
      const headers = Object.assign({}, init.headers as Record<string, string>);
      headers.authorization = `DPoP ${accessToken}`;
      headers.dpop = await session.buildProof({ htm, htu: url, accessToken });
      const copy = Object.assign({}, init);
      copy.headers = headers;
      return copy;
    };
    let response = await send(url, await signed(), control);
    const nonce = nonceChallenge(response);
    if (nonce !== undefined) {
      session.rememberNonce(url, nonce);
      kit.discardBody(response);
      response = await send(url, await signed(), control);
    }
    const next = response.headers.get('dpop-nonce');
    if (next !== null && next !== '') session.rememberNonce(url, next);
    return response;
  };
}
