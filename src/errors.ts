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
} from '../machines/errors.js';
