/** `mcp-xstate-transport view [recording.jsonl]`: the chart view on 127.0.0.1 until Ctrl-C (W5). */
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { serveView } from '../view/server.js';
import { exitCodes } from './failure.js';

export async function viewCommand(argv: string[]): Promise<number> {
  if (argv.length > 1 || argv.some((arg) => arg.startsWith('-'))) {
    console.error('usage: mcp-xstate-transport view [recording.jsonl]');
    return exitCodes.usage;
  }
  const file = argv[0];
  const recording = file === undefined ? undefined : { text: await readFile(file, 'utf8'), name: basename(file) };
  const server = await serveView(recording === undefined ? {} : { recording });
  const what =
    recording === undefined
      ? 'live: run `mcp-xstate-transport <url> --watch --view`, or attachToView(transport, url)'
      : `replaying ${recording.name}`;
  console.log(`chart view: ${server.url.href} (${what})`);
  console.log('Ctrl-C stops it.');
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => {
      resolve();
    });
    process.once('SIGTERM', () => {
      resolve();
    });
  });
  await server.close();
  return exitCodes.ok;
}
