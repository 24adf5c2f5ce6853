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
} from '../machines/errors.js';
