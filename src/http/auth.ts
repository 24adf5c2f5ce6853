import type { AuthChallenge } from '../../machines/types.js';
import { McpTransportError } from '../../machines/errors.js';
import type { FetchLike } from './client.js';

/**
 * OAuth goes through the official SDK's own `auth()` flow (discovery, PKCE, registration,
 * refresh): the SDK is an optional peer dependency, loaded only when an authProvider needs it.
 */

type AuthResult = 'AUTHORIZED' | 'REDIRECT';

interface SdkAuthModule {
  auth(
    provider: never,
    options: {
      serverUrl: string | URL;
      authorizationCode?: string;
      scope?: string;
      resourceMetadataUrl?: URL;
      fetchFn?: FetchLike;
    },
  ): Promise<AuthResult>;
  UnauthorizedError: new (message?: string) => Error;
}

let sdkAuth: Promise<SdkAuthModule> | undefined;

function loadSdkAuth(): Promise<SdkAuthModule> {
  sdkAuth ??= import('@modelcontextprotocol/sdk/client/auth.js').then(
    (module) => module as unknown as SdkAuthModule,
    (cause: unknown) => {
      sdkAuth = undefined;
      throw new McpTransportError(
        'authProvider needs the optional peer dependency @modelcontextprotocol/sdk (npm install @modelcontextprotocol/sdk)',
        { cause },
      );
    },
  );
  return sdkAuth;
}

/** The SDK's UnauthorizedError, named so that it reads as what it is (the SDK leaves its name 'Error'). */
export async function unauthorizedError(message?: string): Promise<Error> {
  const { UnauthorizedError } = await loadSdkAuth();
  const error = new UnauthorizedError(message);
  error.name = 'UnauthorizedError';
  return error;
}

/** `WWW-Authenticate: Bearer resource_metadata="…", scope="…", error="…"` (RFC 6750, RFC 9728). */
export function parseChallenge(header: string | null): AuthChallenge | undefined {
  if (header === null || !/^\s*bearer\b/i.test(header)) return undefined;
  const challenge: AuthChallenge = {};
  for (const match of header.matchAll(/([a-z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/gi)) {
    const key = (match[1] ?? '').toLowerCase();
    const value = (match[2] ?? match[3] ?? '').replace(/\\(.)/g, '$1');
    if (key === 'resource_metadata') challenge.resourceMetadataUrl = value;
    else if (key === 'scope') challenge.scope = value;
    else if (key === 'error') challenge.error = value;
  }
  return challenge;
}

export interface AuthorizeRequest {
  provider: object;
  serverUrl: URL;
  challenge: AuthChallenge | undefined;
  fetch: FetchLike;
  authorizationCode?: string | undefined;
}

/** Runs the SDK's flow; a flow that needs the user's browser ends in the SDK's UnauthorizedError. */
export async function authorize(request: AuthorizeRequest): Promise<'AUTHORIZED'> {
  const sdk = await loadSdkAuth();
  const options: Parameters<SdkAuthModule['auth']>[1] = { serverUrl: request.serverUrl, fetchFn: request.fetch };
  const { challenge } = request;
  if (challenge?.scope !== undefined) options.scope = challenge.scope;
  if (challenge?.resourceMetadataUrl !== undefined) {
    try {
      options.resourceMetadataUrl = new URL(challenge.resourceMetadataUrl);
    } catch {
      // An unusable resource_metadata URL: the SDK falls back to well-known discovery.
    }
  }
  if (request.authorizationCode !== undefined) options.authorizationCode = request.authorizationCode;
  const result = await sdk.auth(request.provider as never, options);
  if (result !== 'AUTHORIZED') {
    throw await unauthorizedError(
      request.authorizationCode === undefined
        ? 'authorization needs the user: redirected to the authorization server'
        : 'Failed to authorize',
    );
  }
  return result;
}
