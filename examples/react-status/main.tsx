import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import {
  loadEngine,
  parseSavedState,
  StreamableHTTPClientTransport,
  type SavedTransportState,
  type StreamableHTTPClientTransportOptions,
} from '../../src/index.js';
import { viewInspector } from '../../src/devtools/index.js';
import { App, type PageMemory } from './app.js';

// The MCP endpoint comes from the page's address: ?server=http://127.0.0.1:3000/mcp
const server = new URLSearchParams(window.location.search).get('server');
// W5: &view=http://127.0.0.1:PORT/ (the chart view, `mcp-xstate-transport view`) watches this page's transport live.
const view = new URLSearchParams(window.location.search).get('view');
// E1: &era=modern runs the v2 SDK Client, which negotiates 2026-07-28 with a server that speaks it.
const era = new URLSearchParams(window.location.search).get('era') === 'modern' ? 'modern' : 'streamable';
const inspect = view === null ? {} : { inspect: viewInspector(view).inspect };
const container = document.getElementById('root');
if (!container) throw new Error('index.html has no #root');

/** sessionStorage survives a reload of this tab, and nothing else: the right lifetime for a session. */
function read(key: string): unknown {
  try {
    const text = sessionStorage.getItem(key);
    return text === null ? undefined : JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * W1: a transport that continues the session saved when the page was last left, if any (no new
 * initialize; the standalone stream resumes with Last-Event-ID), and saves it again on `pagehide`.
 */
function pageTransport(
  endpoint: URL,
  options: StreamableHTTPClientTransportOptions,
): { transport: StreamableHTTPClientTransport; memory: PageMemory } {
  const key = `mcp-xstate-transport:${endpoint.href}`;
  const savedNotes = read(`${key}:notifications`);
  let restoreState: SavedTransportState | undefined;
  try {
    const saved = read(key);
    restoreState = saved === undefined ? undefined : parseSavedState(saved);
  } catch (error) {
    console.warn('ignoring the saved transport state:', error);
  }
  let transport: StreamableHTTPClientTransport;
  try {
    transport = new StreamableHTTPClientTransport(endpoint, restoreState === undefined ? options : { ...options, restoreState });
  } catch (error) {
    // A state for another endpoint is refused: start a new session instead.
    console.warn('ignoring the saved transport state:', error);
    restoreState = undefined;
    transport = new StreamableHTTPClientTransport(endpoint, options);
  }
  window.addEventListener('pagehide', () => {
    const state = transport.saveState();
    if (state === undefined) sessionStorage.removeItem(key);
    else sessionStorage.setItem(key, JSON.stringify(state));
  });
  const memory: PageMemory = {
    restored: restoreState !== undefined,
    notifications: restoreState !== undefined && Array.isArray(savedNotes) ? savedNotes.filter((note) => typeof note === 'string') : [],
    keep: (notifications) => {
      sessionStorage.setItem(`${key}:notifications`, JSON.stringify(notifications));
    },
  };
  return { transport, memory };
}

/** The page, drawn once the chart engine is there (below). */
const render = () => {
  createRoot(container).render(
    <StrictMode>
      {server === null ? (
        <main>
          <h1>MCP transport status</h1>
          <p>
            Add the MCP server to the address: <code>?server=http://127.0.0.1:PORT/mcp</code> (<code>npm run example</code> prints a
            complete link).
          </p>
        </main>
      ) : (
        <App {...pageTransport(new URL(server, window.location.href), inspect)} server={server} era={era} />
      )}
    </StrictMode>,
  );
};

// The badge reads `transport.actor` before the Client connects, so the chart engine comes first (a page that
// imports only the root gets it on the first start(); docs/inspection.md).
loadEngine().then(render, (error: unknown) => {
  container.textContent = `could not load the transport: ${String(error)}`;
});
