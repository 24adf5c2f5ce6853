/**
 * `npm run example`: two real MCP servers behind CORS fronts, one per protocol era (the 1.x SDK's
 * 2025-11-25 server with sessions; the v2 SDK's `createMcpHandler`, speaking 2026-07-28), and
 * Vite's dev server for the status page, all on 127.0.0.1; prints a page address for each era.
 * Type `r` + Enter to restart the 2025 server (the page shows `reconnecting`, then a new session),
 * `n` to send a notification (2025: a log message; 2026-07-28: tools/list_changed on the page's
 * listen stream), `u` to switch an outage of both on or off (the badge turns `degraded`, with why,
 * and counts down to each retry), `q` (or Ctrl+C) to stop. Reload the page: the session goes on
 * (W1); switch the browser offline: the badge says so (W2).
 */
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createServer } from 'vite';
import { startCorsServer } from '../../test/browser/cors-server.js';
import { startModernCorsServer } from '../../test/browser/modern-server.js';

const mcp = await startCorsServer();
const modern = await startModernCorsServer();
const vite = await createServer({ configFile: fileURLToPath(new URL('vite.config.ts', import.meta.url)) });
await vite.listen();
const page = vite.resolvedUrls?.local[0];
if (page === undefined) throw new Error('Vite did not report its address');

console.log(`MCP server, 2025-11-25: ${mcp.url.href}`);
console.log(`MCP server, 2026-07-28: ${modern.url.href}`);
console.log(`Status page, 2025-11-25: ${page}?server=${encodeURIComponent(mcp.url.href)}`);
console.log(`Status page, 2026-07-28: ${page}?server=${encodeURIComponent(modern.url.href)}&era=modern`);
console.log('Type r + Enter to restart the 2025 server, n to send a notification, u to switch an outage on or off, q to quit.');

let notes = 0;
let available = true;
let stopping = false;
const lines = createInterface({ input: process.stdin });

async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  lines.close();
  process.stdin.destroy();
  await vite.close();
  await mcp.close();
  await modern.close();
}

lines.on('line', (line) => {
  const command = line.trim();
  if (command === 'r') {
    void mcp.restartBackend().then(() => {
      console.log('MCP server restarted: every session is gone');
    });
  } else if (command === 'n') {
    void mcp.log(`note ${++notes} from the server`);
    modern.toolsChanged();
  } else if (command === 'u') {
    available = !available;
    mcp.setAvailable(available);
    modern.setAvailable(available);
    console.log(available ? 'outage over: the page reconnects at its next retry' : 'outage: every request is answered 503');
  } else if (command === 'q') {
    void stop();
  }
});
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
