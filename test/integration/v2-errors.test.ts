/**
 * E2, F6: under the v2 SDK's Client, with version negotiation, a failed connect() is the SDK's
 * own `SdkError` (ERA_NEGOTIATION_FAILED) and this transport's typed error sits in its `cause`;
 * `findTransportError` finds it there (docs/eras.md, "Errors under the v2 Client").
 */
import { describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/client';
import {
  findTransportError,
  McpTransportError,
  StreamableHTTPClientTransport,
  StreamableHTTPError,
  TransportClosedError,
} from '../../src/index.js';
import { closedPort } from '../support/harness.js';

describe('E2, F6: this package’s error under the v2 Client', () => {
  it('E2, F6: a refused connection under versionNegotiation auto: SdkError ERA_NEGOTIATION_FAILED, and findTransportError finds the StreamableHTTPError in its cause', async () => {
    const port = await closedPort();
    const client = new Client({ name: 'v2-errors', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    const error = await client.connect(new StreamableHTTPClientTransport(`http://127.0.0.1:${port}/mcp`)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as { code?: unknown }).code).toBe('ERA_NEGOTIATION_FAILED');
    expect(error).not.toBeInstanceOf(StreamableHTTPError);
    const found = findTransportError(error, StreamableHTTPError);
    expect(found).toBeInstanceOf(StreamableHTTPError);
    expect(found?.message).toContain('ECONNREFUSED');
    expect(findTransportError(error)).toBe(found);
    expect(findTransportError(error, TransportClosedError)).toBeUndefined();
  });

  it('F6: findTransportError takes the error itself, a chain with a cycle, and anything thrown', () => {
    const own = new StreamableHTTPError('HTTP 500', { status: 500 });
    expect(findTransportError(own)).toBe(own);
    const outer = new Error('outer', { cause: new Error('middle', { cause: own }) });
    expect(findTransportError(outer, StreamableHTTPError)?.status).toBe(500);
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    (a as { cause?: unknown }).cause = b;
    expect(findTransportError(a)).toBeUndefined();
    expect(findTransportError('a string')).toBeUndefined();
    expect(findTransportError(undefined, McpTransportError)).toBeUndefined();
  });
});
