/**
 * What every test `OAuthClientProvider` keeps in memory for one client: its registration, its
 * tokens and its PKCE verifier. The integration fixture's provider and the conformance client's
 * providers build on it; nothing here talks to a server (and nothing imports vitest, so the
 * conformance client can run it in its own process).
 */
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';

export abstract class InMemoryOAuthClient implements OAuthClientProvider {
  protected storedClient: OAuthClientInformationMixed | undefined;
  protected storedTokens: OAuthTokens | undefined;
  protected verifier: string | undefined;

  constructor(client?: OAuthClientInformationMixed) {
    this.storedClient = client;
  }

  abstract get redirectUrl(): string | URL | undefined;
  abstract get clientMetadata(): OAuthClientMetadata;
  abstract redirectToAuthorization(authorizationUrl: URL): void | Promise<void>;

  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.storedClient;
  }

  saveClientInformation(clientInformation: OAuthClientInformationMixed): void {
    this.storedClient = clientInformation;
  }

  tokens(): OAuthTokens | undefined {
    return this.storedTokens;
  }

  saveTokens(tokens: OAuthTokens): void {
    this.storedTokens = tokens;
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (this.verifier === undefined) throw new Error('no PKCE code verifier saved');
    return this.verifier;
  }
}
