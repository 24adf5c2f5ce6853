/**
 * U9: what comes from outside and is not on the per-message path is checked with zod/mini: the
 * constructor's options, a `restoreState`, a recording the chart view reads. Each error names the
 * field and the shape it must have, never the value given (X1).
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  InvalidOptionsError,
  InvalidRecordingError,
  InvalidSavedStateError,
  McpTransportError,
  parseSavedState,
  StreamableHTTPClientTransport,
  type SavedTransportState,
  type StreamableHTTPClientTransportOptions,
} from '../../src/index.js';
import { serveView, type ViewServer } from '../../src/devtools/view/server.js';
import { rejection, thrown } from '../support/harness.js';
import { graphOf, readSource } from '../support/import-graph.js';

const url = 'http://127.0.0.1:1/mcp';
const secret = 'Bearer s3cr3t-t0ken';
const sessionSecret = 'session-7f3a9c-do-not-log';

/** Options as an untyped caller (JavaScript, JSON config) might pass them. */
const untyped = (options: Record<string, unknown>) => options as StreamableHTTPClientTransportOptions;

const servers: ViewServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

describe('U9: constructor options', () => {
  it('U9: an option of the wrong type is refused with InvalidOptionsError naming the field and the expected shape, never the value', () => {
    const error = thrown(
      () =>
        new StreamableHTTPClientTransport(
          url,
          untyped({
            reconnectionOptions: { maxRetries: 'x', initialReconnectionDelay: 10 },
            requestInit: { headers: { authorization: secret } },
            sessionId: sessionSecret,
            authProvider: { tokens: () => ({ access_token: secret }) },
          }),
        ),
    );
    expect(error).toBeInstanceOf(InvalidOptionsError);
    expect(error).toBeInstanceOf(McpTransportError);
    const invalid = error as InvalidOptionsError;
    expect(invalid.field).toBe('reconnectionOptions.maxRetries');
    expect(invalid.expected).toBe('a whole number, 0 or more (or Infinity)');
    expect(invalid.message).toBe(
      'invalid options: reconnectionOptions.maxRetries: expected a whole number, 0 or more (or Infinity), got a string',
    );

    const many = thrown(
      () =>
        new StreamableHTTPClientTransport(
          url,
          untyped({ fetch: secret, redirectPolicy: 'anywhere', sessionId: 42, requestInit: { headers: { authorization: secret } } }),
        ),
    ) as InvalidOptionsError;
    expect(many).toBeInstanceOf(InvalidOptionsError);
    expect(many.issues).toEqual([
      { field: 'redirectPolicy', expected: "'same-origin' or 'follow'", received: 'a string' },
      { field: 'fetch', expected: 'a fetch function', received: 'a string' },
      { field: 'sessionId', expected: 'a string', received: 'a number' },
    ]);
    expect(many.message).toContain('fetch: expected a fetch function, got a string');
    // X1: no value given reaches the message: not the token handed as `fetch`, not a header.
    expect(many.message).not.toContain('s3cr3t');
    expect(many.message).not.toContain('anywhere');

    for (const [options, field, expected] of [
      [{ network: true }, 'network', 'false or a network signal ({ online, subscribe })'],
      [{ authProvider: {} }, 'authProvider.tokens', 'a function'],
      [{ maxMessageBytes: 0 }, 'maxMessageBytes', 'a whole number of bytes, 1 or more'],
      [{ deleteTimeout: -1 }, 'deleteTimeout', 'a number of milliseconds, 0 or more'],
      [{ standaloneStream: 'no' }, 'standaloneStream', 'true or false'],
      [
        { reconnectionOptions: { reconnectionDelayGrowFactor: 0.5 } },
        'reconnectionOptions.reconnectionDelayGrowFactor',
        'a number, 1 or more',
      ],
      [{ inspect: 3 }, 'inspect', 'an inspection observer (an object or a function), or { observer, bodies }'],
    ] as const) {
      const refused = thrown(() => new StreamableHTTPClientTransport(url, untyped(options))) as InvalidOptionsError;
      expect(refused, field).toBeInstanceOf(InvalidOptionsError);
      expect([refused.field, refused.expected], field).toEqual([field, expected]);
    }
    expect((thrown(() => new StreamableHTTPClientTransport(url, null as never)) as InvalidOptionsError).message).toBe(
      'invalid options: options: expected an options object, got null',
    );

    // Good options, unknown keys (as the SDK's transport allows) and explicit undefineds pass.
    const fine = new StreamableHTTPClientTransport(
      url,
      untyped({
        fetch: () => Promise.reject(new Error('unused')),
        reconnectionOptions: { maxRetries: Infinity, jitter: false },
        network: false,
        inspect: () => undefined,
        sessionId: undefined,
        somethingTheSdkAdds: 1,
      }),
    );
    expect(fine).toBeInstanceOf(StreamableHTTPClientTransport);
  });
});

describe('U9: restoreState', () => {
  const good: SavedTransportState = { v: 1, endpoint: url, sessionId: sessionSecret, protocolVersion: '2025-11-25' };

  it('U9, W1, E10: a bad restoreState (wrong era, wrong types) is refused with InvalidSavedStateError naming the field; nothing is lost', () => {
    const wrongEra = { ...good, era: 'legacy' };
    const before = JSON.stringify(wrongEra);
    const refused = thrown(() => new StreamableHTTPClientTransport(url, untyped({ restoreState: wrongEra }))) as InvalidSavedStateError;
    expect(refused).toBeInstanceOf(InvalidSavedStateError);
    expect(refused).toBeInstanceOf(InvalidOptionsError);
    expect([refused.field, refused.expected]).toEqual(['restoreState.era', "'modern', or absent"]);
    expect(refused.message).toBe("not a saved transport state: restoreState.era: expected 'modern', or absent, got a string");
    // X1: the session ID is never echoed; the caller's object is untouched.
    expect(refused.message).not.toContain(sessionSecret);
    expect(JSON.stringify(wrongEra)).toBe(before);

    const modernWithSession = { v: 1, endpoint: url, era: 'modern', sessionId: sessionSecret };
    const modern = thrown(() => parseSavedState(modernWithSession)) as InvalidSavedStateError;
    expect([modern.field, modern.expected]).toEqual(['sessionId', "absent in a 2026-07-28 (era: 'modern') state"]);
    expect(modern.message).not.toContain(sessionSecret);

    const types = thrown(() =>
      parseSavedState({ v: '1', endpoint: new URL(url), sessionId: 7, standaloneLastEventId: 'é', discover: [] }),
    ) as InvalidSavedStateError;
    expect(types.issues.map((issue) => [issue.field, issue.received])).toEqual([
      ['v', 'a string'],
      ['endpoint', 'an object'],
      ['sessionId', 'a number'],
      ['discover', 'an array'],
      ['standaloneLastEventId', 'a string'],
    ]);
    expect((thrown(() => parseSavedState(null)) as InvalidSavedStateError).message).toBe(
      'not a saved transport state: expected an object (what saveState() returned), got null',
    );

    // The good state still restores, extra keys dropped, and a transport without it starts fresh.
    expect(parseSavedState({ ...good, note: 'kept elsewhere' })).toEqual(good);
    expect(new StreamableHTTPClientTransport(url, { restoreState: good })).toBeInstanceOf(StreamableHTTPClientTransport);
    expect(new StreamableHTTPClientTransport(url)).toBeInstanceOf(StreamableHTTPClientTransport);
  });
});

describe('U9: recordings read by the chart view', () => {
  const lines = [
    { t: 0, kind: 'header', actor: '', format: 'mcp-xstate-transport/recording@1' },
    { t: 1, kind: 'actor', actor: 'x:0', machine: 'connection' },
    { t: 2, kind: 'snapshot', actor: 'x:0', value: 'idle', status: 'active', tags: [], children: [] },
    { t: 3, kind: 'timer', actor: 'post-1', id: 'xstate.after.reconnectDelay.postStream.backoff.timed', delay: 500 },
  ].map((line) => JSON.stringify(line));

  it("U9, W5: a recording with a bad line is refused by the view's reader, naming the line and the field", async () => {
    const badDelay = [...lines.slice(0, 3), JSON.stringify({ t: 3, kind: 'timer', actor: 'post-1', id: 'x', delay: 'soon' }), lines[3]];
    const refused = await rejection(serveView({ recording: { text: `${badDelay.join('\n')}\n`, name: 'bad.jsonl' } }));
    expect(refused).toBeInstanceOf(InvalidRecordingError);
    const invalid = refused as InvalidRecordingError;
    expect([invalid.line, invalid.field, invalid.expected]).toEqual([4, 'delay', 'a delay in ms, a number']);
    expect(invalid.message).toBe('not a recording: line 4: delay: expected a delay in ms, a number, got a string');

    for (const [line, field, expected] of [
      ['{"t":5,"kind":"bogus","actor":"a"}', 'kind', 'one of header, actor, event, snapshot, emit, timer, cancel'],
      ['[1,2]', '', 'a recorder line (a JSON object with t, kind and actor)'],
      ['{"kind":"event","actor":"a","event":"e"}', 't', 'a time in ms, a number'],
      ['{"t":5,"kind":"snapshot","actor":"a","value":"idle","tags":[1]}', 'tags.0', 'a string'],
      ['garbage', '', 'one JSON object per line'],
    ] as const) {
      const error = await rejection(
        serveView({ recording: { text: [...lines.slice(0, 2), line, ...lines.slice(2)].join('\n'), name: 'r' } }),
      );
      expect(error, line).toBeInstanceOf(InvalidRecordingError);
      expect(
        [(error as InvalidRecordingError).line, (error as InvalidRecordingError).field, (error as InvalidRecordingError).expected],
        line,
      ).toEqual([3, field, expected]);
    }

    // A good recording is served; so is one whose last line was cut off mid-write (the page names it).
    const view = await serveView({ recording: { text: `${lines.join('\n')}\n{"t":4,"ki`, name: 'cut.jsonl' } });
    servers.push(view);
    expect((await fetch(new URL('/recording', view.url))).status).toBe(200);
    // The live feed names what it refuses, the same way.
    expect(view.ingest(`${lines[1]}\n{"t":"x","kind":"event","actor":"a","event":"e"}`)).toEqual({
      accepted: 1,
      rejected: 1,
      problems: ['not a recording: line 2: t: expected a time in ms, a number, got a string'],
    });
  });
});

describe('U9: zod stays at the edges', () => {
  /** The modules every message passes through: the data plane, the exchanges, the SSE reader, the message check. */
  const perMessage = ['src/data-plane.ts', 'src/http/exchanges.ts', 'src/sse/reader.ts', 'src/schema.ts', 'src/actors.ts'];
  const importsZod = (file: string, read = readSource) => /from '(zod[^']*)'|import\('zod/.test(read(file));

  it('U9: no module of the per-message path loads zod; the options and saved-state checks do', () => {
    for (const entry of perMessage) {
      const graph = [...graphOf(entry)];
      expect(
        graph.filter((file) => importsZod(file)),
        entry,
      ).toEqual([]);
    }
    expect(graphOf('src/options.ts').has('src/validation.ts')).toBe(true);
    expect(graphOf('src/saved-state.ts').has('src/validation.ts')).toBe(true);
    expect(importsZod('src/validation.ts')).toBe(true);
    // The check can fail: a planted import of the validation module in the SSE reader is found.
    const planted = (path: string) =>
      path === 'src/sse/reader.ts' ? `${readSource(path)}\nimport './../validation.js';\n` : readSource(path);
    expect([...graphOf('src/sse/reader.ts', planted)]).toContain('src/validation.ts');
  });

  /** The modules that import zod among those the package's doors reach (package.json "exports"). */
  const doors = ['src/index.ts', 'src/node.ts', 'machines/index.ts', 'src/testing.ts', 'src/devtools/index.ts'];
  const zodImporters = (read = readSource) =>
    [...new Set(doors.flatMap((door) => [...graphOf(door, read)]))].filter((file) => importsZod(file, read)).sort();

  it('U9: of every module a door reaches, only src/validation.ts imports zod (the CLI and the demo server are no door)', () => {
    expect(zodImporters()).toEqual(['src/validation.ts']);
    expect(importsZod('src/devtools/demo-server.ts') && importsZod('src/devtools/cli/args.ts')).toBe(true);
  });

  it('U9: the check can fail: a planted zod import in a module the devtools door reaches is found', () => {
    const planted = (path: string) =>
      path === 'src/devtools/recorder.ts' ? `import * as z from 'zod/mini';\n${readSource(path)}` : readSource(path);
    expect(zodImporters(planted)).toEqual(['src/devtools/recorder.ts', 'src/validation.ts']);
  });
});
