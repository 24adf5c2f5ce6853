/**
 * The prose cannot point nowhere: every relative link in the project's markdown (the README, the
 * docs/ pages, ARCHITECTURE.md, CONTRIBUTING.md, …) names a file that exists and, when it names an
 * anchor, a heading of that file, with GitHub's heading ids.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repositoryRoot } from '../support/import-graph.js';

const skipped = new Set(['node_modules', 'dist', '.git', 'coverage', 'test-results']);

function markdownFiles(folder = repositoryRoot): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (skipped.has(entry.name)) continue;
    const path = join(folder, entry.name);
    if (entry.isDirectory()) out.push(...markdownFiles(path));
    else if (entry.name.endsWith('.md')) out.push(path);
  }
  return out;
}

/** The text outside fenced code blocks, where a `](…)` is code, not a link. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '');
}

/** GitHub's id for a heading: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function headingIds(text: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  for (const match of prose(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = match[1]!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    ids.add(count === 0 ? base : `${base}-${count}`);
  }
  return ids;
}

/** Links of a markdown file that do not resolve, as `file: target`. */
function brokenLinks(file: string, text: string, read: (path: string) => string | undefined): string[] {
  const broken: string[] = [];
  for (const match of prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = match[1]!;
    if (/^[a-z][a-z+.-]*:/i.test(target)) continue;
    const [path, anchor] = target.split('#', 2) as [string, string | undefined];
    const resolved = path === '' ? file : join(dirname(file), decodeURI(path));
    const name = `${relative(repositoryRoot, file)}: ${target}`;
    if (!existsSync(resolved)) {
      broken.push(name);
      continue;
    }
    if (anchor === undefined || anchor === '' || !resolved.endsWith('.md')) continue;
    const body = read(resolved);
    if (body === undefined || !headingIds(body).has(anchor)) broken.push(name);
  }
  return broken;
}

const read = (path: string) => (existsSync(path) ? readFileSync(path, 'utf8') : undefined);

describe('links in the markdown', () => {
  it('every relative link names a file that exists, and a heading there when it has an anchor', () => {
    const files = markdownFiles();
    expect(files.map((file) => relative(repositoryRoot, file))).toEqual(expect.arrayContaining(['README.md', 'docs/chart.md']));
    expect(files.flatMap((file) => brokenLinks(file, readFileSync(file, 'utf8'), read))).toEqual([]);
  });

  it('the check can fail: a missing file and a missing heading are reported', () => {
    const file = join(repositoryRoot, 'README.md');
    const text =
      '[a](docs/nowhere.md) [b](docs/chart.md#no-such-heading) [c](docs/chart.md#the-lifecycle-chart) [d](https://example.com/x)';
    expect(brokenLinks(file, text, read)).toEqual(['README.md: docs/nowhere.md', 'README.md: docs/chart.md#no-such-heading']);
  });

  it('makes the ids GitHub makes', () => {
    const ids = headingIds(
      '# Debugging: record, attach to an issue, replay\n## Keep the session (W1)\n## `close()` twice\n## Notes\n## Notes\n',
    );
    expect([...ids]).toEqual(['debugging-record-attach-to-an-issue-replay', 'keep-the-session-w1', 'close-twice', 'notes', 'notes-1']);
  });
});
