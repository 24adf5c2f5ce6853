/** `mcp-xstate-transport view [recording.jsonl]`: the chart view on 127.0.0.1 until Ctrl-C (W5). */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { InvalidRecordingError } from '../../../machines/errors.js';
import { serveView, type ViewServer } from '../view/server.js';
import { exitCodes, UserFacingError } from './failure.js';
import { seeHelp } from './args.js';

/**
 * U11: a file name to suggest for `--record`, next to `beside`, that names no existing file: a
 * hint must never lead the user to overwrite their own file (`view notes.txt` does not suggest
 * `--record notes.txt`).
 */
export function freshRecordingName(beside: string | undefined): string {
  const dir = beside === undefined ? '.' : dirname(beside);
  const named = (name: string) => (dir === '.' ? name : join(dir, name));
  for (let n = 1; n < 1_000; n++) {
    const candidate = named(n === 1 ? 'session.jsonl' : `session-${String(n)}.jsonl`);
    if (!existsSync(candidate)) return candidate;
  }
  return named(`session-${String(Date.now())}.jsonl`);
}

/** U11: the recording's text; a file that cannot be read is the user's mistake, said in one line with the fix. */
async function readRecording(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : '';
    const what =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'a directory, not a file'
          : code === 'EACCES' || code === 'EPERM'
            ? 'not readable (permission denied)'
            : `not readable (${code || (error instanceof Error ? error.message : String(error))})`;
    throw new UserFacingError(
      `cannot open the recording ${file}: ${what}; give the path of a .jsonl file written by --record (or run \`mcp-xstate-transport view\` without a file for the live view)`,
      exitCodes.usage,
    );
  }
}

export async function viewCommand(argv: string[]): Promise<number> {
  if (argv.length > 1 || argv.some((arg) => arg.startsWith('-'))) {
    console.error(`mcp-xstate-transport: view takes at most one recording file and no options, got: ${argv.join(' ')}; ${seeHelp}`);
    return exitCodes.usage;
  }
  const file = argv[0];
  const recording = file === undefined ? undefined : { text: await readRecording(file), name: basename(file) };
  let server: ViewServer;
  try {
    server = await serveView(recording === undefined ? {} : { recording });
  } catch (error) {
    // U11: a file that is not a recording is the user's mistake: its line and field, and what a recording is.
    if (error instanceof InvalidRecordingError) {
      throw new UserFacingError(
        `${file ?? 'the file'} is ${error.message}; record one with \`mcp-xstate-transport <url> --record ${freshRecordingName(file)}\` or createJsonlRecorder`,
        exitCodes.usage,
      );
    }
    throw error;
  }
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
