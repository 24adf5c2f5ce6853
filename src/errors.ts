export {
  McpTransportError,
  StreamableHTTPError,
  ProtocolError,
  StreamEndedError,
  SessionExpiredError,
  TransportClosedError,
  TransportFailedError,
  InvalidMessageError,
} from '../machines/errors.js';
