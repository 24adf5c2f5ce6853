import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { StreamableHTTPClientTransport, viewInspector } from '../../src/index.js';
import { App } from './app.js';

// The MCP endpoint comes from the page's address: ?server=http://127.0.0.1:3000/mcp
const server = new URLSearchParams(window.location.search).get('server');
// W5: &view=http://127.0.0.1:PORT/ (the chart view, `tsx src/cli.ts view`) watches this page's transport live.
const view = new URLSearchParams(window.location.search).get('view');
const inspect = view === null ? {} : { inspect: viewInspector(view).inspect };
const container = document.getElementById('root');
if (!container) throw new Error('index.html has no #root');

createRoot(container).render(
  <StrictMode>
    {server === null ? (
      <main>
        <h1>MCP transport status</h1>
        <p>
          Add the MCP server to the address: <code>?server=http://127.0.0.1:PORT/mcp</code> (<code>npm run example</code>{' '}
          prints a complete link).
        </p>
      </main>
    ) : (
      <App transport={new StreamableHTTPClientTransport(new URL(server, window.location.href), inspect)} server={server} />
    )}
  </StrictMode>,
);
