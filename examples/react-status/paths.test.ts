/**
 * W8: the page's badge along every path of the connection chart, in both eras, the way an app
 * tests its own UI with `mcp-xstate-transport/testing`: the paths come from the real chart, each
 * is walked by a real transport over the in-memory server, and at every state on the way the
 * badge must say what that state means to a person looking at the page.
 */
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { activeStateIds, chartPaths, chartStateIds, describePath, walkPath } from '../../src/testing.js';
import type { StreamableHTTPClientTransport } from '../../src/index.js';
import { Badge, DegradedReason } from './badge.js';

/** What the chart's state means to a person looking at the page: the app's own reading of its state ids. */
function meaning(states: readonly string[]): string {
  const has = (...ids: string[]) => ids.some((id) => states.includes(id));
  if (has('failed')) return 'failed';
  if (has('closed')) return 'closed';
  if (has('closing', 'open.session.closing', 'open.session.draining')) return 'closing';
  if (has('authorizing')) return 'authorizing';
  if (has('open.network.offline', 'modern.network.offline')) return 'offline';
  if (has('reconnecting', 'recovering')) return 'reconnecting';
  if (has('open.health.degraded', 'modern.health.degraded')) return 'degraded';
  if (has('connecting', 'initializing')) return 'connecting';
  if (has('open', 'modern')) return 'connected';
  return 'idle';
}

/** The badge and the line under it, as React renders them for this transport now. */
function header(transport: StreamableHTTPClientTransport): { word: string; reason: string } {
  const badge = renderToStaticMarkup(createElement(Badge, { transport }));
  const reason = renderToStaticMarkup(createElement(DegradedReason, { transport }));
  return { word: /data-status="([a-z]+)"/.exec(badge)?.[1] ?? '?', reason };
}

describe('W8: the example badge along the chart paths', () => {
  it('W8: for every path of both eras, at every state on the way, the badge says what the state means (and why, when degraded)', async () => {
    const all = chartStateIds();
    const visited = new Set<string>();
    const shown = new Set<string>();
    let walked = 0;
    let renders = 0;
    const perEra: string[] = [];
    for (const era of ['streamable', 'modern'] as const) {
      const paths = await chartPaths({ era });
      perEra.push(`${paths.length} ${era}`);
      for (const path of paths) {
        const wrong: string[] = [];
        const test = await walkPath(path, {
          onSnapshot: (snapshot, transport) => {
            const expected = meaning(activeStateIds(snapshot.value));
            const { word, reason } = header(transport);
            renders++;
            shown.add(word);
            if (word !== expected) wrong.push(`${word} in ${activeStateIds(snapshot.value).join(', ')} (means ${expected})`);
            if ((word === 'degraded') !== (reason !== '')) wrong.push(`${word} with the reason line "${reason}"`);
            if (word === 'degraded' && !/HTTP 503|outage|stream ended/.test(reason)) wrong.push(`degraded because "${reason}"`);
          },
        });
        for (const id of test.visited) visited.add(id);
        await test.transport.close();
        expect(wrong, `${era}: ${describePath(path)}`).toEqual([]);
        walked++;
      }
    }
    // Written past the reporter, which keeps passing tests silent in `npm test`.
    process.stdout.write(
      `W8: the badge along ${walked} paths (${perEra.join(', ')}): ${renders} renders; ` +
        `the paths visited ${visited.size} of the chart's ${all.length} states\n`,
    );
    expect([...shown].sort()).toEqual(
      ['authorizing', 'closed', 'closing', 'connected', 'connecting', 'degraded', 'failed', 'idle', 'offline', 'reconnecting'].sort(),
    );
    expect([...visited].filter((id) => !all.includes(id))).toEqual([]);
  });
});
