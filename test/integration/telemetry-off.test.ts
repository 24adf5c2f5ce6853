/**
 * O2: without the `telemetry` option nothing of OpenTelemetry is loaded or spent: a whole session
 * with calls never imports `@opentelemetry/api` (its first import is watched through a module
 * mock that only records it), and with the option but no SDK registered nothing is recorded.
 * This file imports nothing that loads the api itself.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { closeRigs, rig } from '../support/proxy-rig.js';
import { textOf } from '../support/harness.js';

const api = vi.hoisted(() => ({ loads: 0 }));

vi.mock('@opentelemetry/api', async (importOriginal) => {
  api.loads++;
  return importOriginal();
});

afterEach(async () => {
  await closeRigs();
});

describe('O2: telemetry off costs nothing', () => {
  it('O2: without the telemetry option a session with calls never loads @opentelemetry/api; with it, start() loads it and calls still work with no SDK registered', async () => {
    const { client } = await rig();
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'untraced' } }))).toBe('untraced');
    await client.callTool({ name: 'progress', arguments: { steps: 2 } }, undefined, { onprogress: () => undefined });
    await client.close();
    expect(api.loads).toBe(0);

    // The check can fail: the option loads it (global providers, none registered: no-op spans).
    const traced = await rig({ transport: { telemetry: true } });
    expect(api.loads).toBe(1);
    expect(textOf(await traced.client.callTool({ name: 'echo', arguments: { text: 'no-op tracer' } }))).toBe('no-op tracer');
    // Nothing registered: send() took its untraced path; no trace context went out.
    const body = traced.proxy.requests.find((request) => request.tool === 'echo')?.body as { params: Record<string, unknown> };
    expect(body.params._meta).toBeUndefined();
    const { trace } = await import('@opentelemetry/api');
    expect(trace.getTracer('probe').startSpan('probe').isRecording()).toBe(false);
  });
});
