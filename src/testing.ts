/**
 * W4, W7: `mcp-xstate-transport/testing`. Puts a real transport (the real chart, the real HTTP and
 * SSE code) into any state of its chart without a network, in either protocol era, for an app's
 * own tests: its `fetch` is a scripted in-memory MCP server, and its network signal is driven by
 * hand. W8: the chart's own paths, to walk a UI through every state (`chartPaths`, `walkPath`).
 *
 *   const { transport } = await transportIn('reconnecting');
 *   render(<Badge transport={transport} />); // shows "reconnecting"
 *
 * The door only re-exports, by name: the in-memory server (`testing/server.ts`), `transportIn`
 * and its helpers (`testing/states.ts`), the chart's paths (`testing/paths.ts`).
 */
import { engine } from './engine.js';
import { registerEngine } from './engine-registry.js';

// The test helpers read `transport.actor` before start(): the chart engine comes with them.
registerEngine(engine);

export { manualNetwork } from './network.js';
export { InMemoryMcpServer, type Held, type SeenRequest } from './testing/server.js';
export {
  defaultHandshake,
  listenRequest,
  modernTestStates,
  testRequest,
  tokenlessProvider,
  transportIn,
  type TestEra,
  type TestState,
  type TestTransport,
  type TransportInOptions,
} from './testing/states.js';
export {
  activeStateIds,
  chartPaths,
  chartStateIds,
  chartSteps,
  describePath,
  PathDivergedError,
  walkPath,
  type ChartPath,
  type ChartPathsOptions,
  type ChartStep,
  type StepName,
  type WalkedPath,
  type WalkOptions,
} from './testing/paths.js';
