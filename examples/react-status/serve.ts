/**
 * `npm run example`: the SDK's real MCP server (behind a CORS front) and Vite's dev server for
 * the status page, both on 127.0.0.1; prints the page's address. Type `r` + Enter to restart the
 * MCP server (the page shows `reconnecting`, then a new session), `n` to send a notification,
 * `u` to switch an outage on or off (the page counts down to each retry), `q` (or Ctrl+C) to stop.
 * Reload the page: the session goes on (W1); switch the browser offline: the badge says so (W2).
 */
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createServer } from 'vite';
import { startCorsServer } from '../../test/browser/cors-server.js';

const mcp = await startCorsServer();
const vite = await createServer({ configFile: fileURLToPath(new URL('vite.config.ts', import.meta.url)) });
await vite.listen();
const page = vite.resolvedUrls?.local[0];
if (page === undefined) throw new Error('Vite did not report its address');

console.log(`MCP server: ${mcp.url.href}`);
console.log(`Status page: ${page}?server=${encodeURIComponent(mcp.url.href)}`);
console.log('Type r + Enter to restart the MCP server, n to send a notification, u to switch an outage on or off, q to quit.');

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
}

lines.on('line', (line) => {
  const command = line.trim();
  if (command === 'r') {
    void mcp.restartBackend().then(() => {
      console.log('MCP server restarted: every session is gone');
    });
  } else if (command === 'n') {
    void mcp.log(`note ${++notes} from the server`);
  } else if (command === 'u') {
    available = !available;
    mcp.setAvailable(available);
    console.log(available ? 'outage over: the page reconnects at its next retry' : 'outage: every request is answered 503');
  } else if (command === 'q') {
    void stop();
  }
});
process.once('SIGINT', () => void stop());
process.once('SIGTERM', () => void stop());
