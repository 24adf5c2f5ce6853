/**
 * A5: a DPoP-protected resource server's front on 127.0.0.1: every request to an MCP path must
 * carry `Authorization: DPoP <token>` and a proof that `jose` verifies (RFC 9449 §4.3: `typ`
 * dpop+jwt, an asymmetric `alg`, a public `jwk` that verifies the signature; `htm`, `htu`
 * without query or fragment, `iat`, `ath` of the token, a `jti` never seen before and, when asked,
 * the current nonce). A good request is forwarded to the real server behind it (the SDK's), a
 * bad one refused with a `DPoP` challenge. Every request is logged with the verdict.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { calculateJwkThumbprint, decodeProtectedHeader, EmbeddedJWK, jwtVerify } from 'jose';
import { forwardTo, listenLocal, shutDown } from './http.js';

const algorithms = ['ES256', 'ES384', 'ES512', 'RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'EdDSA'];

export interface DpopRecord {
  method: string;
  /** Path and query as received. */
  url: string;
  /** `DPoP` or `Bearer`, as the Authorization header said; '' without one. */
  scheme: string;
  /** The raw proof header, if any (a test looks for it where it must never be). */
  proof: string | undefined;
  jti: string | undefined;
  htu: string | undefined;
  nonce: string | undefined;
  /** The key's RFC 7638 thumbprint. */
  thumbprint: string | undefined;
  /** Why the proof was refused; undefined when it verified. */
  problem: string | undefined;
  /** The status the front answered itself (401), or undefined when forwarded. */
  refused: number | undefined;
}

export interface DpopFrontOptions {
  /** The access token a request must present. */
  token: string;
  /** Require this nonce first (answered `use_dpop_nonce` with it); change it with `rotate()`. */
  nonce?: string | undefined;
  /** Let a Bearer token through without a proof (a Bearer token stays Bearer). */
  allowBearer?: boolean;
  /** Answer every proof `use_dpop_nonce` with a nonce never asked for before: no request ever gets through. */
  stubborn?: boolean;
}

export interface DpopFront {
  /** The front's URL for the backend's path (query kept). */
  url: URL;
  records: DpopRecord[];
  /** Proofs that failed verification, with why. */
  problems(): string[];
  /** The next answer that passes carries `DPoP-Nonce: next`, and from that answer on `next` is required. */
  rotate(next: string): void;
  close(): Promise<void>;
}

const base64url = (bytes: Buffer) => bytes.toString('base64url');

async function verify(record: DpopRecord, req: IncomingMessage, token: string, origin: string): Promise<void> {
  const proof = record.proof;
  if (proof === undefined || proof.includes(',')) throw new Error('not exactly one DPoP header');
  const header = decodeProtectedHeader(proof);
  if (header.typ !== 'dpop+jwt') throw new Error(`typ ${String(header.typ)}`);
  if (header.jwk === undefined || 'd' in header.jwk) throw new Error('no public jwk, or a private one');
  const { payload } = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms });
  record.jti = typeof payload.jti === 'string' ? payload.jti : undefined;
  record.htu = typeof payload.htu === 'string' ? payload.htu : undefined;
  record.nonce = typeof payload.nonce === 'string' ? payload.nonce : undefined;
  record.thumbprint = await calculateJwkThumbprint(header.jwk, 'sha256');
  const target = new URL(req.url ?? '/', origin);
  if (record.jti === undefined) throw new Error('no jti');
  if (payload.htm !== req.method) throw new Error(`htm ${String(payload.htm)} for a ${req.method ?? ''}`);
  if (record.htu !== `${target.origin}${target.pathname}`) throw new Error(`htu ${String(record.htu)} for ${target.href}`);
  if (typeof payload.iat !== 'number' || Math.abs(Date.now() / 1000 - payload.iat) > 60) throw new Error('iat');
  if (payload.ath !== base64url(createHash('sha256').update(token, 'ascii').digest())) throw new Error('ath does not match the token');
}

/** A front that verifies every proof before `backend` sees the request; paths outside `/mcp` and `/messages` are 404. */
export async function startDpopFront(backend: URL, options: DpopFrontOptions): Promise<DpopFront> {
  const records: DpopRecord[] = [];
  const jtis = new Set<string>();
  let nonce = options.nonce;
  let announce: string | undefined;
  let origin = '';
  const refuse = (res: ServerResponse, record: DpopRecord, error: string, extra: Record<string, string> = {}) => {
    record.refused = 401;
    res.writeHead(401, { 'www-authenticate': `DPoP error="${error}", algs="ES256"`, 'content-type': 'application/json', ...extra });
    res.end(JSON.stringify({ error }));
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path !== backend.pathname && path !== '/messages') {
      res.writeHead(404).end();
      return;
    }
    const authorization = req.headers.authorization ?? '';
    const space = authorization.indexOf(' ');
    const scheme = space === -1 ? authorization : authorization.slice(0, space);
    const presented = space === -1 ? '' : authorization.slice(space + 1);
    const proofHeader = req.headers.dpop;
    const record: DpopRecord = {
      method: req.method ?? '',
      url: req.url ?? '',
      scheme,
      proof: Array.isArray(proofHeader) ? proofHeader.join(',') : proofHeader,
      jti: undefined,
      htu: undefined,
      nonce: undefined,
      thumbprint: undefined,
      problem: undefined,
      refused: undefined,
    };
    records.push(record);
    if (scheme === 'Bearer' && options.allowBearer === true && presented === options.token) {
      if (record.proof !== undefined) record.problem = 'a proof with a Bearer token';
    } else {
      try {
        if (scheme !== 'DPoP' || presented !== options.token) throw new Error(`Authorization scheme ${scheme || '(none)'}`);
        await verify(record, req, options.token, origin);
      } catch (error) {
        record.problem = error instanceof Error ? error.message : String(error);
        refuse(res, record, 'invalid_dpop_proof');
        return;
      }
      const jti = record.jti ?? '';
      if (jtis.has(jti)) {
        record.problem = `jti ${jti} used before`;
        refuse(res, record, 'invalid_dpop_proof');
        return;
      }
      jtis.add(jti);
      if (options.stubborn === true) nonce = `nonce-${records.length}`;
      if (nonce !== undefined && record.nonce !== nonce) {
        refuse(res, record, 'use_dpop_nonce', { 'dpop-nonce': nonce });
        return;
      }
    }
    const next = announce;
    announce = undefined;
    // The new nonce is required from the answer that announces it on.
    if (next !== undefined) nonce = next;
    forwardTo(req, res, new URL(req.url ?? '/', backend), {
      headersOf: (answer) => (next === undefined ? answer.headers : { ...answer.headers, 'dpop-nonce': next }),
    });
  };
  const http = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(error));
    });
  });
  const port = await listenLocal(http);
  origin = `http://127.0.0.1:${port}`;
  return {
    url: new URL(`${backend.pathname}${backend.search}`, origin),
    records,
    problems: () => records.filter((r) => r.problem !== undefined).map((r) => `${r.method} ${r.url}: ${r.problem ?? ''}`),
    rotate: (next) => {
      announce = next;
    },
    close: () => shutDown(http),
  };
}
