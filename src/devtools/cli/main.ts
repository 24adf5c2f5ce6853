#!/usr/bin/env node
/**
 * The `mcp-xstate-transport` command. Each subcommand is one `case` below; the default (a URL)
 * connects. No test code, no dev dependency: this file ships in the package as its `bin`.
 */
import { parseArgs, parseDoctorArgs, seeHelp, usage, UsageError } from './args.js';
import { connect } from './connect.js';
import { doctor } from './doctor/doctor.js';
import { exitCodes, UserFacingError } from './failure.js';
import { viewCommand } from './view.js';

/** Parses with `parse`; a UsageError (U9: the option and the shape it wants) is one line pointing at --help, exit 2. */
function parsed<T>(parse: () => T): T | number {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`mcp-xstate-transport: ${error.message}; ${seeHelp}`);
    return exitCodes.usage;
  }
}

/** `mcp-xstate-transport [connect] <url> [options]`. */
function connectCommand(argv: string[]): Promise<number> | number {
  const args = parsed(() => parseArgs(argv));
  if (typeof args === 'number') return args;
  if (args.command === 'help') {
    console.log(usage);
    return exitCodes.ok;
  }
  return connect(args.options);
}

/** N4: `mcp-xstate-transport doctor <url> [options]`. */
function doctorCommand(argv: string[]): Promise<number> | number {
  const args = parsed(() => parseDoctorArgs(argv));
  if (typeof args === 'number') return args;
  if (args.command === 'help') {
    console.log(usage);
    return exitCodes.ok;
  }
  return doctor(args.options);
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
    case 'doctor':
      return doctorCommand(rest);
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
    // U11: the user's mistake (a file, a port, a missing peer): one line with the fix, its exit code.
    if (error instanceof UserFacingError) {
      console.error(`mcp-xstate-transport: ${error.message}`);
      process.exit(error.exitCode);
    }
    console.error(`mcp-xstate-transport: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(exitCodes.failed);
  },
);
