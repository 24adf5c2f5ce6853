/**
 * W5, U4: the chart view's parts without a browser: the chart model and version, the
 * recorder's header, facts and timers, the replay fold, the view server's feed and the bridge.
 * The page itself is driven in headless Chromium by test/browser/view.test.ts.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { createActor, emit, setup, type AnyStateNode } from 'xstate';
import { connectionMachine, postStreamMachine, standaloneStreamMachine } from '../../machines/index.js';
import { createJsonlRecorder, recordingFormat, type JsonlRecord } from '../../src/devtools/recorder.js';
import { providedConnectionMachine } from '../../src/actors.js';
import { chartOptions, fakeIo, machineWith, recordingSink } from './fakes.js';
import {
  activePaths,
  chartVersion,
  describeRecord,
  frameAt,
  packageVersion,
  parseRecording,
  serveView,
  transportCharts,
  transportChartVersion,
  viewInspector,
  type ChartNode,
  type RecordLine,
  type ViewServer,
} from '../../src/devtools/view/index.js';

const servers: ViewServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

function statePaths(node: AnyStateNode): string[] {
  return Object.values(node.states).flatMap((child) => [child.path.join('.'), ...statePaths(child)]);
}
function modelPaths(node: ChartNode): string[] {
  return node.children.flatMap((child) => [child.path, ...modelPaths(child)]);
}

const record = (t: number, kind: string, actor: string, rest: Record<string, unknown> = {}): RecordLine => ({ t, kind, actor, ...rest });

describe('chart model and version', () => {
  it('W5: the view draws every state of the three machines, from their definitions', () => {
    const charts = transportCharts();
    expect(charts.map((chart) => chart.id)).toEqual([connectionMachine.id, postStreamMachine.id, standaloneStreamMachine.id]);
    expect(modelPaths(charts[0]!.root)).toEqual(statePaths(connectionMachine.root));
    expect(modelPaths(charts[1]!.root)).toEqual(statePaths(postStreamMachine.root));
    expect(modelPaths(charts[2]!.root)).toEqual(statePaths(standaloneStreamMachine.root));
    const open = charts[0]!.root.children.find((child) => child.path === 'open');
    expect(open?.type).toBe('parallel');
    expect(charts[0]!.root.transitions.map((transition) => transition.label)).toContain('close');
  });

  it('W5: the chart version follows states and transitions, not their order or the provided actors', () => {
    const base = (order: 'ab' | 'ba', rewired: boolean, name = 'b') => {
      const states = { a: { on: { go: rewired ? 'a' : name } }, [name]: {} };
      const ordered = order === 'ab' ? states : Object.fromEntries(Object.entries(states).reverse());
      return setup({}).createMachine({ id: 'm', initial: 'a', states: ordered });
    };
    const version = chartVersion([base('ab', false)]);
    expect(version).toMatch(/^[0-9a-f]{16}$/);
    expect(chartVersion([base('ba', false)])).toBe(version);
    expect(chartVersion([base('ab', true)])).not.toBe(version);
    expect(chartVersion([base('ab', false, 'c')])).not.toBe(version);
    expect(transportChartVersion()).toBe(chartVersion([providedConnectionMachine, postStreamMachine, standaloneStreamMachine]));
  });
});

describe('recorder lines for the view', () => {
  it("U4, W5: a recording starts with a header naming its format, the package's version and the chart version", () => {
    const lines: string[] = [];
    createJsonlRecorder((line) => lines.push(line), { now: () => 5 });
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([
      { t: 5, kind: 'header', actor: '', format: recordingFormat, package: packageVersion, chart: transportChartVersion() },
    ]);
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    expect(packageVersion).toBe(pkg.version);
  });

  it('U4, W5: facts a machine emits, the delays it schedules and cancels, and its machine and children are recorded', () => {
    const machine = setup({ types: { emitted: {} as { type: 'warning'; error: Error } }, delays: { wait: () => 1_234 } }).createMachine({
      id: 'demo',
      initial: 'waiting',
      states: {
        waiting: {
          entry: emit({ type: 'warning', error: new Error('Bearer abc.def expired') }),
          after: { wait: 'done' },
          on: { skip: 'skipped' },
        },
        skipped: {},
        done: {},
      },
    });
    const lines: string[] = [];
    const actor = createActor(machine, { inspect: createJsonlRecorder((line) => lines.push(line), { now: () => 0 }) }).start();
    actor.send({ type: 'skip' });
    actor.stop();
    const records = lines.map((line) => JSON.parse(line) as JsonlRecord);
    expect(records.find((r) => r.kind === 'actor')).toMatchObject({ machine: 'demo' });
    expect(records.find((r) => r.kind === 'emit')).toEqual({
      t: 0,
      kind: 'emit',
      actor: expect.any(String) as string,
      event: 'warning',
      details: { error: { name: 'Error', message: 'Bearer ‹redacted› expired' } },
    });
    expect(records.find((r) => r.kind === 'timer')).toMatchObject({ id: 'xstate.after.wait.demo.waiting', delay: 1_234 });
    expect(records.find((r) => r.kind === 'cancel')).toMatchObject({ id: 'xstate.after.wait.demo.waiting' });
    expect(records.find((r) => r.kind === 'snapshot')).toMatchObject({ value: 'waiting', children: [] });
  });
});

describe('replay', () => {
  it('W5: a recording parses line by line; bad lines are named and skipped, never fatal', () => {
    const text = [
      JSON.stringify({ t: 0, kind: 'header', actor: '', chart: 'x' }),
      '{"t":1,"kind":"actor","actor":"x:0","machine":"connection"}',
      'garbage',
      '[1,2]',
      '{"kind":"event"}',
      '',
      JSON.stringify({ t: 0, kind: 'header', actor: '' }),
    ].join('\r\n');
    const parsed = parseRecording(text);
    expect(parsed.header).toMatchObject({ chart: 'x' });
    expect(parsed.records).toHaveLength(1);
    expect(parsed.problems).toEqual([
      'line 3: not JSON',
      'line 4: not a JSON object',
      'line 5: not a recorder line (t, kind and actor are missing)',
      'line 7: a second header (two recordings joined?)',
    ]);
  });

  it("W5: a frame holds the live actors' states and pending waits; a child its parent dropped, or one that finished, is gone", () => {
    const records = [
      record(0, 'actor', 'x:0', { machine: 'connection' }),
      record(1, 'snapshot', 'x:0', {
        value: { open: { session: 'active' } },
        status: 'active',
        children: ['post-1'],
        session: '#00000001',
      }),
      record(2, 'actor', 'post-1', { machine: 'postStream', parent: 'x:0' }),
      record(3, 'timer', 'post-1', { id: 'xstate.after.reconnectDelay.postStream.backoff.timed', delay: 500 }),
      record(3, 'snapshot', 'post-1', { value: { backoff: 'timed' }, status: 'active', attempt: 1, children: [] }),
      record(600, 'event', 'post-1', { event: 'xstate.after.reconnectDelay.postStream.backoff.timed' }),
      record(601, 'snapshot', 'post-1', { value: 'done', status: 'done', children: [] }),
      record(602, 'snapshot', 'x:0', { value: 'reconnecting', status: 'active', children: [] }),
    ];
    const waiting = frameAt(records, 4);
    expect(waiting.actors.map((a) => [a.name, a.machine, a.value])).toEqual([
      ['x:0', 'connection', { open: { session: 'active' } }],
      ['post-1', 'postStream', { backoff: 'timed' }],
    ]);
    expect(waiting.actors[1]?.timers).toEqual([{ id: 'xstate.after.reconnectDelay.postStream.backoff.timed', delay: 500, due: 503 }]);
    expect(frameAt(records, 5).actors[1]?.timers).toEqual([]);
    expect(frameAt(records, 6).actors.map((a) => a.name)).toEqual(['x:0']);
    expect(frameAt(records, 7).actors.map((a) => a.value)).toEqual(['reconnecting']);
    expect(frameAt(records, -1).actors).toEqual([]);
    expect(activePaths({ open: { session: 'active', standalone: 'active' } })).toEqual([
      'open',
      'open.session',
      'open.session.active',
      'open.standalone',
      'open.standalone.active',
    ]);
    expect(describeRecord(records[4]!)).toBe('→ backoff.timed attempt 1');
    expect(describeRecord(records[3]!)).toBe('after reconnectDelay in 500 ms');
    expect(describeRecord(record(0, 'emit', 'x:0', { event: 'session.changed', details: { previous: '#1', current: '#2' } }))).toBe(
      'emit session.changed #1 → #2',
    );
  });
});

describe('view server and bridge', () => {
  it('W5: the server listens on loopback only and hands recorder lines, history first, to a page over SSE; other lines are refused', async () => {
    await expect(serveView({ host: '0.0.0.0' as '127.0.0.1' })).rejects.toThrow(/loopback only/);
    const view = await serveView();
    servers.push(view);
    expect(view.url.hostname).toBe('127.0.0.1');
    expect(view.ingest('{"t":1,"kind":"event","actor":"a","event":"start"}\nnope')).toEqual({
      accepted: 1,
      rejected: 1,
      problems: ['not a recording: line 2: expected one JSON object per line, got text that is not JSON'],
    });
    const response = await fetch(new URL('/events', view.url));
    const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!text.includes('"event":"start"')) text += (await reader.read()).value ?? '';
    const posted = await fetch(view.ingestUrl, { method: 'POST', body: '{"t":2,"kind":"event","actor":"a","event":"close"}' });
    expect(await posted.json()).toEqual({ accepted: 1, rejected: 0, problems: [] });
    while (!text.includes('"event":"close"')) text += (await reader.read()).value ?? '';
    expect(text).toContain('data: {"t":1,"kind":"event","actor":"a","event":"start"}\n\n');
    await reader.cancel();
    expect((await fetch(new URL('/recording', view.url))).status).toBe(404);
    const page = await (await fetch(view.url)).text();
    expect(page).toContain(transportChartVersion());
    expect(page).not.toMatch(/<script[^>]+src=|https?:\/\/(?!127\.0\.0\.1)[a-z]/i);
  });

  it('W5: the bridge posts recorder lines in order; a view that is gone costs nothing but the dropped lines', async () => {
    expect(() => viewInspector('http://example.com/')).toThrow(/loopback/);
    const view = await serveView();
    servers.push(view);
    const bridge = viewInspector(view.url);
    const actor = createActor(machineWith(fakeIo()), {
      input: { options: chartOptions(), sink: recordingSink() },
      inspect: bridge.inspect,
    });
    actor.start();
    actor.stop();
    await bridge.flush();
    expect(bridge.delivered).toBeGreaterThanOrEqual(3);
    expect(bridge.dropped).toBe(0);

    await view.close();
    servers.length = 0;
    const gone = viewInspector(view.url);
    gone.inspect.next?.({
      type: '@xstate.event',
      actorRef: actor,
      rootId: actor.sessionId,
      event: { type: 'start' },
      sourceRef: undefined,
    });
    await gone.close();
    expect(gone.delivered).toBe(0);
    expect(gone.dropped).toBe(2);
  });
});
