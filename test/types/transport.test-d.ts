import { expectTypeOf, test } from 'vitest';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { StreamableHTTPClientTransportOptions as SdkOptions } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  Transport as TransportV2,
  TransportSendOptions as TransportSendOptionsV2,
  StreamableHTTPClientTransportOptions as SdkOptionsV2,
} from '@modelcontextprotocol/client';
import type { Meter, Tracer } from '@opentelemetry/api';
import {
  StreamableHTTPClientTransport,
  type SdkAuthOption,
  type StreamableHTTPClientTransportOptions,
  type TelemetryOption,
} from '../../src/index.js';

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

test('E2: the transport is assignable to the v2 SDK Transport (@modelcontextprotocol/client 2.x) too', () => {
  const transport = new StreamableHTTPClientTransport(new URL('http://127.0.0.1/mcp'));
  expectTypeOf(transport).toExtend<TransportV2>();
  const asTransport: TransportV2 = transport;
  expectTypeOf(asTransport.hasPerRequestStream).toEqualTypeOf<boolean | undefined>();
  expectTypeOf<TransportSendOptionsV2>().toExtend<NonNullable<Parameters<StreamableHTTPClientTransport['send']>[1]>>();
  expectTypeOf<
    Pick<
      SdkOptionsV2,
      | 'requestInit'
      | 'fetch'
      | 'sessionId'
      | 'protocolVersion'
      | 'redirectPolicy'
      | 'reconnectionScheduler'
      | 'maxStepUpRetries'
      | 'skipIssuerMetadataValidation'
    >
  >().toExtend<StreamableHTTPClientTransportOptions>();
});

test("O1: the telemetry option takes @opentelemetry/api's own Tracer and Meter, though its types never import the api", () => {
  expectTypeOf<{ tracer: Tracer; meter: Meter }>().toExtend<TelemetryOption>();
  expectTypeOf<true>().toExtend<NonNullable<StreamableHTTPClientTransportOptions['telemetry']>>();
  expectTypeOf<{ tracer: string }>().not.toExtend<TelemetryOption>();
});

test("A1: the sdkAuth option takes either SDK's OAuth functions as they are exported, or a loader of either module", () => {
  type V2 = typeof import('@modelcontextprotocol/client');
  type V1 = typeof import('@modelcontextprotocol/sdk/client/auth.js');
  expectTypeOf<Pick<V2, 'auth' | 'UnauthorizedError'>>().toExtend<SdkAuthOption>();
  expectTypeOf<Pick<V2, 'auth' | 'UnauthorizedError' | 'computeScopeUnion' | 'isStrictScopeSuperset'>>().toExtend<SdkAuthOption>();
  expectTypeOf<Pick<V1, 'auth' | 'UnauthorizedError'>>().toExtend<SdkAuthOption>();
  expectTypeOf<() => Promise<V1>>().toExtend<SdkAuthOption>();
  expectTypeOf<() => Promise<V2>>().toExtend<SdkAuthOption>();
  expectTypeOf<{ auth: string }>().not.toExtend<SdkAuthOption>();
});
