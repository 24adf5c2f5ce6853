import { expectTypeOf, test } from 'vitest';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { StreamableHTTPClientTransportOptions as SdkOptions } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPClientTransport, type StreamableHTTPClientTransportOptions } from '../../src/index.js';

test('U1: the transport is assignable to the SDK Transport', () => {
  const transport = new StreamableHTTPClientTransport(new URL('http://127.0.0.1/mcp'));
  expectTypeOf(transport).toExtend<Transport>();
  const asTransport: Transport = transport;
  expectTypeOf(asTransport).toExtend<Transport>();
  expectTypeOf<ReturnType<StreamableHTTPClientTransport['send']>>().toEqualTypeOf<Promise<void>>();
});

test('U1: the SDK option names are accepted', () => {
  expectTypeOf<Pick<SdkOptions, 'requestInit' | 'fetch' | 'sessionId'>>().toExtend<StreamableHTTPClientTransportOptions>();
  expectTypeOf<SdkOptions['reconnectionOptions'] & object>().toExtend<
    NonNullable<StreamableHTTPClientTransportOptions['reconnectionOptions']>
  >();
});
