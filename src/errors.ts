import { McpTransportError, TRANSPORT_ERROR } from '../machines/errors.js';

export {
  McpTransportError,
  StreamableHTTPError,
  ProtocolError,
  MessageTooLargeError,
  MessageTooDeepError,
  StreamIdleError,
  StreamEndedError,
  EmptyResumesError,
  SessionExpiredError,
  TransportClosedError,
  TransportFailedError,
  TransportWaitingError,
  InvalidMessageError,
  OfflineError,
  ModernOnlyServerError,
  HttpAuthError,
  type HttpAuthErrorCode,
  InvalidOptionsError,
  InvalidSavedStateError,
  InvalidRecordingError,
  type InputIssue,
} from '../machines/errors.js';

/**
 * Finds this package's error behind what a Client throws, outermost first, along `cause` and
 * along the `data` of a JSON-RPC error: the v2 SDK's `Client` wraps a failed `connect()` as
 * `SdkError` (`ERA_NEGOTIATION_FAILED`) with this transport's typed error in `cause`; a Client's
 * `McpError` for an error this transport answered in the server's stead (E9's
 * `ModernOnlyServerError`, a call failed after `send()` resolved) holds it behind its `data`.
 * `type` narrows to one class (`findTransportError(error, StreamableHTTPError)?.status`).
 */
export function findTransportError<T extends McpTransportError = McpTransportError>(
  error: unknown,
  type: abstract new (...args: never[]) => T = McpTransportError as unknown as abstract new (...args: never[]) => T,
): T | undefined {
  const seen = new Set<unknown>();
  for (let e: unknown = error; e !== undefined && e !== null && !seen.has(e) && seen.size < 16; e = next(e)) {
    seen.add(e);
    if (e instanceof type) return e;
  }
  return undefined;
}

/** The next link: the typed error behind a made-up JSON-RPC error's `data`, else the `cause`. */
function next(e: unknown): unknown {
  if (typeof e !== 'object' || e === null) return undefined;
  const data: unknown = 'data' in e ? e.data : undefined;
  if (typeof data === 'object' && data !== null && TRANSPORT_ERROR in data) return data[TRANSPORT_ERROR];
  return e instanceof Error ? e.cause : undefined;
}
