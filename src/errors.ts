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
} from '../machines/errors.js';
