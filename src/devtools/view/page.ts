/**
 * W5: the chart view's page as one HTML document: markup, style and script inline, so it needs
 * nothing but the server that sent it (no CDN, no bundler at run time). The script is the source
 * text of `startPage` and of the replay functions, run in the browser.
 */
import { startPage, type PageBoot } from './page-script.js';
import { replayFunctions } from './replay.js';

export type { PageBoot } from './page-script.js';

/** JSON safe inside a <script> element. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

const style = `
:root { font: 13px/1.4 system-ui, sans-serif; color: #1d2330; background: #f6f7f9; }
body { margin: 0; }
header { display: flex; flex-wrap: wrap; gap: 12px; align-items: center; padding: 8px 14px; background: #1d2330; color: #fff; }
header h1 { font-size: 15px; margin: 0; }
header .muted { color: #aab3c5; }
#banner { white-space: pre-wrap; margin: 8px 14px 0; padding: 8px 10px; border: 1px solid #d9a400; background: #fff6d6; border-radius: 4px; }
#controls { display: flex; gap: 6px; align-items: center; padding: 8px 14px; border-bottom: 1px solid #dde1e8; background: #fff; }
#controls input[type=range] { flex: 1; }
main { display: grid; grid-template-columns: minmax(0, 1fr) 420px; gap: 12px; padding: 12px 14px; }
#charts { display: flex; flex-direction: column; gap: 12px; min-width: 0; }
.chart h2, aside h2 { font-size: 13px; margin: 0 0 6px; }
.state { border: 1px solid #c4cad6; border-radius: 6px; padding: 4px 6px; margin: 3px; background: #fff; min-width: 90px; }
.state.root { background: #fbfcfd; }
.state > .title { font-weight: 600; }
.state .invokes, .state .tags { font-weight: 400; color: #6a7385; font-size: 11px; }
.state .actors { font-weight: 400; font-size: 11px; color: #0b5e2a; }
.state .transitions { list-style: none; margin: 2px 0; padding: 0; font-size: 11px; color: #4d5567; }
.children { display: flex; flex-wrap: wrap; align-items: flex-start; }
.children.regions > .state { border-style: dashed; flex: 1; }
.state.active { border-color: #0f8a3c; box-shadow: 0 0 0 2px #0f8a3c inset; background: #eafaf0; }
.state.active.final { background: #e8eefc; }
aside { min-width: 0; }
#waits { margin: 0 0 10px; padding-left: 18px; }
#waits .none { list-style: none; margin-left: -18px; color: #6a7385; }
#log { margin: 0; padding: 0; list-style: none; max-height: 75vh; overflow: auto; border: 1px solid #dde1e8; background: #fff; font: 12px/1.35 ui-monospace, monospace; }
#log li { display: grid; grid-template-columns: 76px 92px 1fr; gap: 6px; padding: 1px 6px; cursor: pointer; }
#log li .time, #log li .actor { color: #6a7385; overflow: hidden; text-overflow: ellipsis; }
#log li.kind-snapshot .text { color: #0b5e2a; }
#log li.kind-emit .text { color: #8a3b00; font-weight: 600; }
#log li.kind-timer .text, #log li.kind-cancel .text { color: #5b3c99; }
#log li.current { background: #fff2b3; }
#log li.internal { display: none; }
#log.show-internal li.internal { display: grid; color: #8a91a0; }
#log.replaying li.current ~ li { opacity: 0.45; }
`;

const markup = `
<header>
  <h1>mcp-xstate-transport · chart view</h1>
  <span id="mode" role="status" aria-label="Mode"></span>
  <span id="versions" class="muted"></span>
  <label>Open a recording <input id="file" type="file" accept=".jsonl,.ndjson,.log,.txt,application/x-ndjson,text/plain"></label>
  <button id="live" type="button">Live</button>
</header>
<div id="banner" role="alert" hidden></div>
<div id="controls">
  <button id="first" type="button" aria-label="First record">|◀ first</button>
  <button id="back" type="button" aria-label="Step back">◀ back</button>
  <button id="forward" type="button" aria-label="Step forward">next ▶</button>
  <button id="last" type="button" aria-label="Last record">last ▶|</button>
  <input id="slider" type="range" aria-label="Time" step="1">
  <label><input id="follow" type="checkbox" checked> follow</label>
  <label><input id="internal" type="checkbox"> internal events</label>
  <output id="position" aria-label="Position"></output>
</div>
<main>
  <div id="charts" aria-label="Charts"></div>
  <aside>
    <h2>Waits</h2>
    <ul id="waits" aria-label="Waits"></ul>
    <h2>Log</h2>
    <ol id="log" aria-label="Log"></ol>
  </aside>
</main>`;

/** The page for `boot`: the charts, the log and the controls, with everything it runs inline. */
export function pageHtml(boot: PageBoot): string {
  const functions = replayFunctions.map((fn) => fn.toString()).join('\n');
  const lib = replayFunctions.map((fn) => fn.name).join(', ');
  const script = [
    // Some TypeScript runners (tsx) wrap functions in __name() to keep their names: a no-op here.
    'const __name = (target) => target;',
    functions,
    startPage.toString(),
    `startPage(${scriptJson(boot)}, { ${lib} });`,
  ].join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>mcp-xstate-transport chart view</title>
<style>${style}</style>
</head>
<body>${markup}
<script type="module">
${script.replace(/<\/script/gi, '<\\/script')}
</script>
</body>
</html>
`;
}
