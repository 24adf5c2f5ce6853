/**
 * A5: the `dpop` option's types, which the client (src/http/client.ts) and the options read
 * without loading DPoP itself: dpop.ts, loaded with the first DPoP-bound token, takes the
 * client's types, and the client takes these, so the two do not import each other.
 */

/** The proof-making part of the v2 SDK's `DpopSession` (what `OAuthClientProvider.dpop()` returns). */
export interface DpopSessionLike {
  buildProof(request: { htm: string; htu: string | URL; accessToken?: string }): Promise<string>;
  rememberNonce(url: string | URL, nonce: string): void;
}

/** A key pair for the `dpop` option (the v2 SDK's `DpopKeyPair` is one): the private key signs, the public one is shown. */
export interface DpopKeyPair {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  /** The JWS algorithm; derived from the key when absent (ES256 for a P-256 key). */
  alg?: string | undefined;
}

/** The `dpop` option: `true` (a fresh, non-extractable ES256 key pair), a key pair, or a `DpopSession`. */
export type DpopOption = true | DpopKeyPair | DpopSessionLike;
