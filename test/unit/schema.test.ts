import { describe, expect, it } from 'vitest';
import { validateMessage } from '../../src/schema.js';

const valid: unknown[] = [
  { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } },
  { jsonrpc: '2.0', id: 'a', method: 'ping' },
  { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } },
  { jsonrpc: '2.0', id: 2, result: {} },
  { jsonrpc: '2.0', id: 3, error: { code: -32000, message: 'no', data: [1] } },
  { jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } },
  { jsonrpc: '2.0', error: { code: 1, message: 'no id' } },
  { jsonrpc: '2.0', id: 4, result: { content: [] }, extra: true },
];

const invalid: unknown[] = [
  { jsonrpc: '1.0', id: 1, method: 'x' },
  { jsonrpc: '2.0', id: 1.5, method: 'x' },
  { jsonrpc: '2.0', id: undefined, method: 'x' },
  { jsonrpc: '2.0', id: 1, method: 7 },
  { jsonrpc: '2.0', method: 'x', params: [1] },
  { jsonrpc: '2.0', method: 'x', params: null },
  { jsonrpc: '2.0', id: 2, result: [] },
  { jsonrpc: '2.0', id: {}, result: {} },
  { jsonrpc: '2.0', result: {} },
  { jsonrpc: '2.0', id: 3, error: { code: 1.5, message: 'x' } },
  { jsonrpc: '2.0', id: 3, error: { code: 1 } },
  { jsonrpc: '2.0', id: true, error: { code: 1, message: 'x' } },
  { jsonrpc: '2.0', id: 3, error: 'boom' },
];

describe('message validation', () => {
  it.each(valid)('X2: accepts a well-formed JSON-RPC message (%j)', (message) => {
    expect(validateMessage(message)).toEqual({ ok: true, message });
  });

  it.each(invalid)('X2, S4: refuses a malformed one with a reason (%j)', (message) => {
    const checked = validateMessage(message);
    expect(checked.ok).toBe(false);
    expect(checked.ok ? '' : checked.reason).not.toBe('');
  });
});
