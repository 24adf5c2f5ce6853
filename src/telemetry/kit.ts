import { envelopeVersion, fingerprint, requestIdsOf } from '../../machines/connection/messages.js';
import { McpTransportError, statusOf, toError } from '../../machines/errors.js';
import type { TelemetryKit } from './option.js';

/**
 * O1: what the lazily loaded telemetry uses of the eager code, handed to `createTelemetry()`
 * (ARCHITECTURE.md, "Invariants"). Apart from the engine (src/engine.ts), which the browser entry
 * loads later.
 */
export const telemetryKit: TelemetryKit = { envelopeVersion, fingerprint, requestIdsOf, statusOf, toError, McpTransportError };
