import { McpTransportError } from '../machines/errors.js';

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
 * Finds this package's error in a `cause` chain, outermost first: the v2 SDK's `Client` wraps a
 * failed `connect()` as `SdkError` (`ERA_NEGOTIATION_FAILED`) with this transport's typed error
 * in `cause`, so `instanceof StreamableHTTPError` on the caught error itself never matches.
 * `type` narrows to one class (`findTransportError(error, StreamableHTTPError)?.status`).
 */
export function findTransportError<T extends McpTransportError = McpTransportError>(
  error: unknown,
  type: abstract new (...args: never[]) => T = McpTransportError as unknown as abstract new (...args: never[]) => T,
): T | undefined {
  const seen = new Set<unknown>();
  for (
    let e: unknown = error;
    e !== undefined && e !== null && !seen.has(e) && seen.size < 16;
    e = e instanceof Error ? e.cause : undefined
  ) {
    seen.add(e);
    if (e instanceof type) return e;
  }
  return undefined;
}
