export {
  McpTransportError,
  StreamableHTTPError,
  ProtocolError,
  MessageTooLargeError,
  StreamIdleError,
  StreamEndedError,
  SessionExpiredError,
  TransportClosedError,
  TransportFailedError,
  InvalidMessageError,
  OfflineError,
  ModernOnlyServerError,
} from '../machines/errors.js';
