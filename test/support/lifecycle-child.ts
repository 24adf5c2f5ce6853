/**
 * F2: the child side of test/integration/lifecycle.test.ts, run as
 * `node --import tsx test/support/lifecycle-child.ts <url>` against a server in the parent.
 * It connects the SDK Client over this transport, calls `echo`, waits (bounded) for the
 * standalone GET to be open, closes, and then must exit by itself: it never calls process.exit.
 * Each step is a line on stdout (`connected`, `called <text>`, `standalone <state>`, `closed`);
 * a failure sets exitCode 1 and is printed on stderr. Still alive 1.5 s after close, it prints
 * what keeps it alive, from an unref'd timer (which cannot keep the process alive itself).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '../../src/node.js';

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms);
  });

/** Whether the standalone GET stream's chart is listening (its state value is `{ listening: … }`). */
function standaloneListening(transport: StreamableHTTPClientTransport): boolean {
  const snapshot: unknown = transport.actor.getSnapshot().children.standalone?.getSnapshot();
  const value = (snapshot as { value?: unknown } | undefined)?.value;
  return typeof value === 'object' && value !== null && 'listening' in value;
}

async function main(url: string): Promise<void> {
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: 'lifecycle-child', version: '1.0.0' });
  await client.connect(transport);
  console.log('connected');
  const result = await client.callTool({ name: 'echo', arguments: { text: 'from the child' } });
  console.log(`called ${JSON.stringify(result.content)}`);
  for (let i = 0; i < 200 && !standaloneListening(transport); i++) await sleep(10);
  console.log(`standalone ${standaloneListening(transport) ? 'listening' : 'not listening'}`);
  await client.close();
  console.log('closed');
  setTimeout(() => {
    console.error(`still alive after close: ${JSON.stringify(process.getActiveResourcesInfo())}`);
  }, 1_500).unref();
}

const url = process.argv[2];
if (url === undefined) {
  console.error('usage: lifecycle-child.ts <server url>');
  process.exitCode = 2;
} else {
  try {
    await main(url);
  } catch (error) {
    console.error(error);
    process.exitCode = 1;
  }
}
