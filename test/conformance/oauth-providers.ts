/**
 * `OAuthClientProvider`s (the SDK's documented interface) for the conformance client. The
 * transport receives one as `authProvider` and, on 401/403, runs the SDK's `auth()` with it
 * (BEHAVIOR A1–A2). Nothing here talks to the MCP server itself.
 *
 * - `AuthorizationCodeProvider`: the interactive flow without a browser. When `auth()` asks to
 *   redirect the user agent, the authorization URL is fetched with `redirect: 'manual'`, the
 *   `code` is read from the `Location` it redirects to (state checked), and kept for the
 *   caller, who hands it to `transport.finishAuth(code)` and reconnects.
 * - `ClientCredentialsProvider`: `client_credentials` grant, authenticated with
 *   `client_secret_basic` (the SDK's default client authentication) or `private_key_jwt`
 *   (an ES256 assertion signed here with node:crypto).
 * - `CrossAppAccessProvider`: SEP-990. The token request first exchanges the IdP's ID token
 *   for an ID-JAG at the IdP (RFC 8693) and then presents it to the authorization server as
 *   an RFC 7523 `jwt-bearer` grant, authenticated with `client_secret_basic`.
 */
import type { AddClientAuthentication, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  AuthorizationServerMetadata,
  OAuthClientInformationMixed,
  OAuthClientMetadata,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { createPrivateKey, randomBytes, randomUUID, sign } from 'node:crypto';
import { InMemoryOAuthClient } from '../support/oauth-client.js';

const log = (message: string): void => {
  process.stderr.write(`[conformance-client] ${message}\n`);
};

/** What every provider here keeps in memory for one client run, and forgets when the SDK says so. */
abstract class InMemoryProvider extends InMemoryOAuthClient {
  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') this.storedClient = undefined;
    if (scope === 'all' || scope === 'tokens') this.storedTokens = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = undefined;
  }
}

export interface AuthorizationCodeProviderOptions {
  clientName: string;
  redirectUrl: string;
  /** Pre-registered client (no dynamic registration). */
  client?: OAuthClientInformationMixed | undefined;
  /** A Client ID Metadata Document URL (SEP-991), used when the authorization server supports it. */
  clientMetadataUrl?: string | undefined;
  /** The most authorization requests this client makes before refusing (a retry limit). */
  maxAuthorizations: number;
}

export class AuthorizationCodeProvider extends InMemoryProvider {
  readonly clientMetadataUrl?: string;
  /** Authorization requests made so far. */
  authorizations = 0;
  private readonly options: AuthorizationCodeProviderOptions;
  private expectedState: string | undefined;
  private pendingCode: string | undefined;

  constructor(options: AuthorizationCodeProviderOptions) {
    super(options.client);
    this.options = options;
    if (options.clientMetadataUrl !== undefined) this.clientMetadataUrl = options.clientMetadataUrl;
  }

  get redirectUrl(): string {
    return this.options.redirectUrl;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.options.clientName,
      redirect_uris: [this.options.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
  }

  state(): string {
    this.expectedState = randomBytes(16).toString('base64url');
    return this.expectedState;
  }

  /** The user agent's part: follow the authorization URL up to the redirect back to us, and keep the code. */
  async redirectToAuthorization(authorizationUrl: URL): Promise<void> {
    if (this.authorizations >= this.options.maxAuthorizations) {
      throw new Error(`refusing authorization request ${this.authorizations + 1}: limit is ${this.options.maxAuthorizations}`);
    }
    this.authorizations += 1;
    log(`authorization request ${this.authorizations}: scope=${authorizationUrl.searchParams.get('scope') ?? '(none)'}`);
    const response = await fetch(authorizationUrl, { redirect: 'manual' });
    await response.body?.cancel();
    const location = response.headers.get('location');
    if (location === null) throw new Error(`authorization endpoint answered ${response.status} without a redirect`);
    const redirect = new URL(location, authorizationUrl);
    const expected = new URL(this.options.redirectUrl);
    if (redirect.origin !== expected.origin || redirect.pathname !== expected.pathname) {
      throw new Error(`authorization redirected to ${redirect.origin}${redirect.pathname}, not the redirect URL`);
    }
    const error = redirect.searchParams.get('error');
    if (error !== null) throw new Error(`authorization failed: ${error}`);
    if (this.expectedState !== undefined && redirect.searchParams.get('state') !== this.expectedState) {
      throw new Error('authorization redirect carried a different state');
    }
    const code = redirect.searchParams.get('code');
    if (code === null) throw new Error('authorization redirect carried no code');
    this.pendingCode = code;
  }

  /** The code from the latest redirect, once; undefined when no redirect happened since. */
  takeAuthorizationCode(): string | undefined {
    const code = this.pendingCode;
    this.pendingCode = undefined;
    return code;
  }
}

/** A compact JWS (RFC 7515) signed with an EC P-256 key, ES256. */
export function signEs256Jwt(claims: Record<string, unknown>, privateKeyPem: string): string {
  const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
  const signingInput = `${encode({ alg: 'ES256', typ: 'JWT' })}.${encode(claims)}`;
  const signature = sign('sha256', Buffer.from(signingInput), {
    key: createPrivateKey(privateKeyPem),
    dsaEncoding: 'ieee-p1363',
  });
  return `${signingInput}.${signature.toString('base64url')}`;
}

export type ClientCredentialsAuth =
  { method: 'client_secret_basic'; clientSecret: string } | { method: 'private_key_jwt'; privateKeyPem: string; algorithm: string };

export class ClientCredentialsProvider extends InMemoryProvider {
  private readonly clientId: string;
  private readonly authentication: ClientCredentialsAuth;

  constructor(clientId: string, authentication: ClientCredentialsAuth) {
    if (authentication.method === 'private_key_jwt' && authentication.algorithm !== 'ES256') {
      throw new Error(`unsupported private_key_jwt algorithm ${authentication.algorithm}`);
    }
    super(
      authentication.method === 'client_secret_basic'
        ? { client_id: clientId, client_secret: authentication.clientSecret }
        : { client_id: clientId },
    );
    this.clientId = clientId;
    this.authentication = authentication;
    if (authentication.method === 'private_key_jwt') {
      const { privateKeyPem } = authentication;
      this.addClientAuthentication = (_headers, params, url, metadata) => {
        this.signAssertion(params, url, metadata, privateKeyPem);
      };
    }
  }

  /** Non-interactive: no redirect URL, so `auth()` asks for tokens directly. */
  get redirectUrl(): undefined {
    return undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'mcp-xstate-transport conformance (client credentials)',
      redirect_uris: [],
      grant_types: ['client_credentials'],
      token_endpoint_auth_method: this.authentication.method,
    };
  }

  redirectToAuthorization(): never {
    throw new Error('client_credentials needs no user agent redirect');
  }

  prepareTokenRequest(scope?: string): URLSearchParams {
    const params = new URLSearchParams({ grant_type: 'client_credentials' });
    if (scope !== undefined) params.set('scope', scope);
    return params;
  }

  /**
   * Set only for private_key_jwt (RFC 7523 §2.2): without it the SDK applies
   * client_secret_basic / _post itself from the client information.
   */
  readonly addClientAuthentication?: AddClientAuthentication;

  private signAssertion(
    params: URLSearchParams,
    url: string | URL,
    metadata: AuthorizationServerMetadata | undefined,
    privateKeyPem: string,
  ): void {
    const now = Math.floor(Date.now() / 1000);
    const assertion = signEs256Jwt(
      { iss: this.clientId, sub: this.clientId, aud: metadata?.issuer ?? String(url), iat: now, exp: now + 300, jti: randomUUID() },
      privateKeyPem,
    );
    params.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
    params.set('client_assertion', assertion);
  }
}

export interface CrossAppAccessOptions {
  clientId: string;
  clientSecret: string;
  idpClientId: string;
  idpIdToken: string;
  idpTokenEndpoint: string;
}

const jwtBearerGrant = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

export class CrossAppAccessProvider extends InMemoryProvider {
  private readonly options: CrossAppAccessOptions;
  private discovery: OAuthDiscoveryState | undefined;

  constructor(options: CrossAppAccessOptions) {
    super({ client_id: options.clientId, client_secret: options.clientSecret });
    this.options = options;
  }

  get redirectUrl(): undefined {
    return undefined;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'mcp-xstate-transport conformance (cross-app access)',
      redirect_uris: [],
      grant_types: [jwtBearerGrant],
      token_endpoint_auth_method: 'client_secret_basic',
    };
  }

  redirectToAuthorization(): never {
    throw new Error('cross-app access needs no user agent redirect');
  }

  /** `auth()` reports what it discovered (PRM resource, authorization server) before asking for a token. */
  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.discovery = state;
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.discovery;
  }

  /** RFC 8693 at the IdP: ID token → ID-JAG for this authorization server and resource; then the jwt-bearer grant. */
  async prepareTokenRequest(scope?: string): Promise<URLSearchParams> {
    const discovery = this.discovery;
    if (discovery === undefined) throw new Error('cross-app access: no discovery state yet');
    const audience = discovery.authorizationServerMetadata?.issuer ?? discovery.authorizationServerUrl;
    const resource = discovery.resourceMetadata?.resource;
    if (resource === undefined) throw new Error('cross-app access: the protected resource metadata named no resource');
    const grants = discovery.authorizationServerMetadata?.grant_types_supported;
    if (grants !== undefined && !grants.includes(jwtBearerGrant)) {
      throw new Error(`authorization server does not support ${jwtBearerGrant}`);
    }
    const exchange = await fetch(this.options.idpTokenEndpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        requested_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
        audience,
        resource,
        subject_token: this.options.idpIdToken,
        subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
        client_id: this.options.idpClientId,
      }),
    });
    const body: unknown = await exchange.json();
    if (!exchange.ok) throw new Error(`IdP token exchange failed (${exchange.status}): ${JSON.stringify(body)}`);
    const idJag = typeof body === 'object' && body !== null && 'access_token' in body ? body.access_token : undefined;
    if (typeof idJag !== 'string') throw new Error('IdP token exchange returned no access_token');
    log('IdP token exchange: ID-JAG obtained');
    const params = new URLSearchParams({ grant_type: jwtBearerGrant, assertion: idJag });
    if (scope !== undefined) params.set('scope', scope);
    return params;
  }
}
