#!/usr/bin/env node
/**
 * The `mcp-xstate-transport` command. Each subcommand is one `case` below; the default (a URL)
 * connects. No test code, no dev dependency: this file ships in the package as its `bin`.
 */
import { parseArgs, usage, UsageError } from './args.js';
import { connect } from './connect.js';
import { exitCodes } from './failure.js';
import { viewCommand } from './view.js';

/** `mcp-xstate-transport [connect] <url> [options]`. */
function connectCommand(argv: string[]): Promise<number> | number {
  let parsed;
  try {
    parsed = parseArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`mcp-xstate-transport: ${error.message}\n\n${usage}`);
    return exitCodes.usage;
  }
  if (parsed.command === 'help') {
    console.log(usage);
    return exitCodes.ok;
  }
  return connect(parsed.options);
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'help':
      console.log(usage);
      return exitCodes.ok;
    case 'connect':
      return connectCommand(rest);
    case 'view':
      return viewCommand(rest);
    default:
      return connectCommand(argv);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
    // close() leaves no request, timer or stream behind, so the process ends by itself; if
    // something still held it open, end it rather than hang.
    setTimeout(() => {
      console.error('mcp-xstate-transport: something was still open after close; exiting');
      process.exit(code);
    }, 2_000).unref();
  },
  (error: unknown) => {
    console.error(`mcp-xstate-transport: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(exitCodes.failed);
  },
);
