export {
  McpTransportError,
  StreamableHTTPError,
  ProtocolError,
  StreamEndedError,
  SessionExpiredError,
  TransportClosedError,
  TransportFailedError,
  InvalidMessageError,
  MessageTooLargeError,
  StreamIdleError,
} from '../machines/errors.js';
