import { describe, expect, it } from 'vitest';
import { maxMessageDepth, nestsTooDeep, sessionIdProblem, validateMessage } from '../../src/schema.js';

/** Each case: a value, and whether it is a JSON-RPC message the transport may pass on. */
const cases: [string, unknown, boolean][] = [
  ['a request', { jsonrpc: '2.0', id: 1, method: 'ping' }, true],
  ['a request with a string id and params', { jsonrpc: '2.0', id: 'a', method: 'x', params: { a: 1 } }, true],
  ['a notification', { jsonrpc: '2.0', method: 'notifications/progress', params: {} }, true],
  ['a result', { jsonrpc: '2.0', id: 2, result: {} }, true],
  ['an error with id null', { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'bad' } }, true],
  ['an error without an id', { jsonrpc: '2.0', error: { code: -32600, message: 'bad', data: [1] } }, true],
  ['extra keys', { jsonrpc: '2.0', id: 2, result: {}, _meta: 1 }, true],
  ['an array', [{ jsonrpc: '2.0', id: 1, method: 'ping' }], false],
  ['null', null, false],
  ['a string', 'hello', false],
  ['jsonrpc 1.0', { jsonrpc: '1.0', id: 1, method: 'ping' }, false],
  ['no jsonrpc', { id: 1, method: 'ping' }, false],
  ['a numeric method', { jsonrpc: '2.0', id: 1, method: 7 }, false],
  ['a fractional id', { jsonrpc: '2.0', id: 1.5, method: 'ping' }, false],
  ['an object id', { jsonrpc: '2.0', id: {}, result: {} }, false],
  ['array params', { jsonrpc: '2.0', method: 'x', params: [1] }, false],
  ['null params', { jsonrpc: '2.0', method: 'x', params: null }, false],
  ['a result without an id', { jsonrpc: '2.0', result: {} }, false],
  ['a string result', { jsonrpc: '2.0', id: 1, result: 'ok' }, false],
  ['an error with a fractional code', { jsonrpc: '2.0', id: 1, error: { code: 1.5, message: 'x' } }, false],
  ['an error without a message', { jsonrpc: '2.0', id: 1, error: { code: 1 } }, false],
  ['a string error', { jsonrpc: '2.0', id: 1, error: 'boom' }, false],
  ['nothing to say', { jsonrpc: '2.0', id: 1 }, false],
];

describe('message validation at the edge', () => {
  it.each(cases)('S4: %s', (_name, value, valid) => {
    const checked = validateMessage(value);
    expect(checked.ok).toBe(valid);
    if (checked.ok) expect(checked.message).toBe(value);
    else expect(checked.reason.length).toBeGreaterThan(0);
  });

  it('H6: session IDs are 1 to 1,024 visible ASCII characters', () => {
    expect(sessionIdProblem('abc-123_~!')).toBeUndefined();
    expect(sessionIdProblem('x'.repeat(1024))).toBeUndefined();
    expect(sessionIdProblem('')).toBeDefined();
    expect(sessionIdProblem('x'.repeat(1025))).toBeDefined();
    expect(sessionIdProblem('a b')).toBeDefined();
    expect(sessionIdProblem('a\nb')).toBeDefined();
    expect(sessionIdProblem('é')).toBeDefined();
  });
});

describe('S7: nesting depth', () => {
  /** A message whose result nests `depth` levels in all (the message itself is level 1), as its JSON text. */
  const message = (depth: number, open = '{"a":', close = '}') =>
    `{"jsonrpc":"2.0","id":1,"result":${open.repeat(depth - 2)}{}${close.repeat(depth - 2)}}`;
  const deepness = (text: string) => nestsTooDeep(JSON.parse(text), text.length);

  it('S7: a message nesting exactly maxMessageDepth levels passes; one level more is refused, in objects and in arrays', () => {
    expect(maxMessageDepth).toBe(512);
    expect(deepness(message(maxMessageDepth))).toBe(false);
    expect(deepness(message(maxMessageDepth + 1))).toBe(true);
    expect(deepness(message(maxMessageDepth, '[', ']'))).toBe(false);
    expect(deepness(message(maxMessageDepth + 1, '[', ']'))).toBe(true);
    // 100,000 levels: refused without a stack overflow of its own.
    expect(deepness(message(100_000, '[', ']'))).toBe(true);
  });

  it('S7: a wide message (many siblings, shallow) passes; a text too short to nest that deep is not walked', () => {
    const wide = JSON.stringify({ jsonrpc: '2.0', id: 1, result: { items: Array.from({ length: 10_000 }, (_, i) => ({ i, tags: [i] })) } });
    expect(deepness(wide)).toBe(false);
    // The walk is skipped below two characters a level: a deep value with a claimed short text is not looked at.
    const deep = JSON.parse(message(maxMessageDepth + 10)) as unknown;
    expect(nestsTooDeep(deep, 2 * maxMessageDepth - 1)).toBe(false);
  });
});
