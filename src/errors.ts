export {
  McpTransportError,
  StreamableHTTPError,
  ProtocolError,
  StreamEndedError,
  SessionExpiredError,
  TransportClosedError,
  TransportFailedError,
  InvalidMessageError,
  OfflineError,
  MessageTooLargeError,
  StreamIdleError,
} from '../machines/errors.js';
