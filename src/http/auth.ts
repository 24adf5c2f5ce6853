import type { AuthChallenge } from '../../machines/types.js';
import type { McpTransportError } from '../../machines/errors.js';
import type { FetchLike } from './client.js';

/**
 * A1: the SDK's OAuth functions, as `@modelcontextprotocol/client` (v2) and
 * `@modelcontextprotocol/sdk/client/auth.js` (1.x) export them (`import { auth, UnauthorizedError }`),
 * or a function that loads one of those modules with `import()`.
 */
export type SdkAuthOption = SdkAuthFunctions | (() => Promise<SdkAuthFunctions>);

/** What of the SDK's OAuth module the flow uses; the v2 SDK's scope helpers widen a step-up (A2). */
export interface SdkAuthFunctions {
  // Declared as methods: the SDK's own parameter types (its provider and options) are accepted as they are.
  auth(provider: never, options: never): Promise<string>;
  UnauthorizedError: new (message?: string) => Error;
  computeScopeUnion?(...scopes: never[]): string | undefined;
  isStrictScopeSuperset?(union: never, current: never): boolean;
}

/**
 * Loaded with `import()` only when an authProvider authorizes (its first 401, or finishAuth()),
 * so a transport without one carries none of this.
 *
 * OAuth goes through the official SDK's own `auth()` flow (discovery, PKCE, registration,
 * refresh): the SDK is an optional peer dependency, loaded only when an authProvider needs it.
 * Which SDK's follows the Client on top: under the v2 Client (`@modelcontextprotocol/client`), the
 * v2 flow, which checks the metadata issuer and the redirect's `iss` (RFC 8414, RFC 9207), sends
 * `application_type` and widens the scope on a step-up; under the 1.x Client, the 1.x flow, whose
 * `UnauthorizedError` is the class that Client's users test for. Either falls back to the other.
 */

type AuthResult = 'AUTHORIZED' | 'REDIRECT';

/** What the flow passes to the SDK's `auth()`. */
interface AuthOptions {
  serverUrl: string | URL;
  authorizationCode?: string;
  /** RFC 9207: the redirect's `iss` (v2 SDK only). */
  iss?: string;
  scope?: string;
  /** A2: ask again even though a refresh token exists (the union is wider than what was granted; v2 SDK only). */
  forceReauthorization?: boolean;
  /** The v2 SDK's opt-out of the RFC 8414 issuer check. */
  skipIssuerMetadataValidation?: boolean;
  resourceMetadataUrl?: URL;
  fetchFn?: FetchLike;
}

/** The SDK's OAuth functions, as the flow calls them (the `sdkAuth` option's shape, read wider). */
interface SdkAuthModule {
  auth(provider: never, options: AuthOptions): Promise<AuthResult>;
  UnauthorizedError: new (message?: string) => Error;
  /** v2 SDK only: the scopes to ask for on a step-up, and whether that is more than was granted. */
  computeScopeUnion?: (...scopes: (string | undefined)[]) => string | undefined;
  isStrictScopeSuperset?: (union: string | undefined, current: string | undefined) => boolean;
}

/** Which SDK generation's Client runs on top of the transport, as far as it has shown. */
export type SdkGeneration = 'v2' | '1.x';

const loaded: Record<SdkGeneration, Promise<SdkAuthModule> | undefined> = { v2: undefined, '1.x': undefined };
// By a name in a variable (as telemetry loads @opentelemetry/api): a bundler never tries to resolve
// an optional peer, so an app that installed one SDK generation (or neither) bundles this package;
// Node resolves the name at run time. A bundled app hands its SDK's functions over (`sdkAuth`).
// The comments: webpack would make a context module of the expression and warn 'Critical dependency'; Vite before 8 warns too.
const load = (name: string): Promise<unknown> => import(/* webpackIgnore: true */ /* @vite-ignore */ name);
const importV2 = () => load('@modelcontextprotocol/client') as Promise<SdkAuthModule>;
const importV1 = () => load('@modelcontextprotocol/sdk/client/auth.js') as Promise<SdkAuthModule>;

/**
 * `TransportError` is the transport's McpTransportError, handed over by the caller: a run-time
 * import of machines/errors.js from this lazily loaded module would make a bundler split the
 * page's eager code into a chunk shared with it (the doors test holds it to that).
 */
function loadSdkAuth(
  TransportError: typeof McpTransportError,
  prefer: SdkGeneration = '1.x',
  given?: SdkAuthOption,
): Promise<SdkAuthModule> {
  // The caller's functions (the `sdkAuth` option) are the flow, whichever Client is on top.
  if (given !== undefined) return Promise.resolve(typeof given === 'function' ? given() : given) as Promise<SdkAuthModule>;
  const [first, second] = prefer === 'v2' ? [importV2, importV1] : [importV1, importV2];
  const pending = (loaded[prefer] ??= first()
    .catch(second)
    .catch((cause: unknown) => {
      loaded[prefer] = undefined;
      throw new TransportError(
        "authProvider needs the SDK's OAuth flow: install the optional peer dependency @modelcontextprotocol/client (v2) or @modelcontextprotocol/sdk (1.x); in a bundled app (a browser), also pass its functions as the sdkAuth option (docs/authorization.md)",
        { cause },
      );
    }));
  return pending;
}

/** The SDK's UnauthorizedError, named so that it reads as what it is (the SDK leaves its name 'Error'). */
export async function unauthorizedError(
  TransportError: typeof McpTransportError,
  message?: string,
  prefer?: SdkGeneration,
  given?: SdkAuthOption,
): Promise<Error> {
  const { UnauthorizedError } = await loadSdkAuth(TransportError, prefer, given);
  const error = new UnauthorizedError(message);
  error.name = 'UnauthorizedError';
  return error;
}

export interface AuthorizeRequest {
  provider: object;
  serverUrl: URL;
  challenge: AuthChallenge | undefined;
  fetch: FetchLike;
  authorizationCode?: string | undefined;
  /** RFC 9207: the `iss` of the authorization redirect, checked by the v2 SDK's flow. */
  iss?: string | undefined;
  /** The Client on top, whose SDK's flow (and UnauthorizedError) is used. */
  sdk?: SdkGeneration | undefined;
  skipIssuerMetadataValidation?: boolean | undefined;
  /** The transport's McpTransportError (see loadSdkAuth). */
  TransportError: typeof McpTransportError;
  /** The `sdkAuth` option: the SDK's OAuth functions the caller handed over, used instead of loading either SDK. */
  sdkAuth?: SdkAuthOption | undefined;
}

/** What the provider was granted so far (`tokens().scope`), if it says. */
async function grantedScope(provider: object): Promise<string | undefined> {
  const tokens =
    'tokens' in provider && typeof provider.tokens === 'function'
      ? ((await (provider.tokens as () => unknown)()) as { scope?: unknown } | undefined)
      : undefined;
  return typeof tokens?.scope === 'string' ? tokens.scope : undefined;
}

/** Runs the SDK's flow; a flow that needs the user's browser ends in the SDK's UnauthorizedError. */
export async function authorize(request: AuthorizeRequest): Promise<'AUTHORIZED'> {
  const sdk = await loadSdkAuth(request.TransportError, request.sdk, request.sdkAuth);
  const options: Parameters<SdkAuthModule['auth']>[1] = { serverUrl: request.serverUrl, fetchFn: request.fetch };
  const { challenge } = request;
  if (challenge?.scope !== undefined) options.scope = challenge.scope;
  // A2 (SEP-2350): a step-up asks for what was granted and what is challenged, not the challenge alone.
  if (challenge?.error === 'insufficient_scope' && sdk.computeScopeUnion !== undefined && sdk.isStrictScopeSuperset !== undefined) {
    const granted = await grantedScope(request.provider);
    const union = sdk.computeScopeUnion(granted, challenge.scope);
    if (union !== undefined) options.scope = union;
    if (sdk.isStrictScopeSuperset(union, granted)) options.forceReauthorization = true;
  }
  if (request.iss !== undefined) options.iss = request.iss;
  if (request.skipIssuerMetadataValidation === true) options.skipIssuerMetadataValidation = true;
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
      request.TransportError,
      request.authorizationCode === undefined
        ? 'authorization needs the user: redirected to the authorization server'
        : 'Failed to authorize',
      request.sdk,
      request.sdkAuth,
    );
  }
  return result;
}
