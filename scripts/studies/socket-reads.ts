/**
 * Issue 44, H11: what one read of a connection costs the client, through the socket's 'data'
 * event (a new buffer and the stream machinery per read) against `onread` with one buffer
 * reused for every read (src/http/h1.ts). A server in another process on 127.0.0.1 writes a
 * progress notification as one chunk of a chunked event stream, one per millisecond, as a server
 * that awaits each `sendNotification` does; the client only counts the bytes. Client CPU per read
 * (`process.cpuUsage()`) in alternating rounds. A study, not a row of `npm run bench`:
 *
 *   npx tsx scripts/studies/socket-reads.ts [--reads=3000] [--rounds=8]
 */
import { fork } from 'node:child_process';
import { createConnection, createServer, type Socket } from 'node:net';
import { median } from '../../bench/stats.js';

const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const reads = Number(arg('reads') ?? 3000);
const rounds = Number(arg('rounds') ?? 8);
const event =
  'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1,"total":500}}\n\n';
const chunk = Buffer.from(`${Buffer.byteLength(event).toString(16)}\r\n${event}\r\n`);

/** The server: a child process running this file with --serve. Each connection's first byte starts `reads` writes, 1 ms apart, then its end. */
function serve(): void {
  // Ends with its parent, however the parent ends (a failed check throws in it).
  process.once('disconnect', () => process.exit(0));
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.once('data', () => {
      let sent = 0;
      const next = () => {
        if (sent++ === reads) socket.end();
        else {
          socket.write(chunk);
          setTimeout(next, 1);
        }
      };
      next();
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const address = server.address();
    if (address !== null && typeof address !== 'string') process.send?.(address.port);
  });
}

/** One connection read to its end; client CPU µs per read. */
function run(port: number, how: 'data' | 'onread'): Promise<number> {
  return new Promise((resolve) => {
    let bytes = 0;
    let count = 0;
    const start = process.cpuUsage();
    const buffer = Buffer.allocUnsafe(64 * 1024);
    const socket: Socket =
      how === 'data'
        ? createConnection({ host: '127.0.0.1', port, noDelay: true })
        : createConnection({
            host: '127.0.0.1',
            port,
            noDelay: true,
            onread: {
              buffer,
              callback: (n: number) => {
                bytes += n;
                count++;
                return true;
              },
            },
          });
    if (how === 'data')
      socket.on('data', (data: Buffer) => {
        bytes += data.length;
        count++;
      });
    socket.on('end', () => socket.destroy());
    socket.on('close', () => {
      const used = process.cpuUsage(start);
      if (bytes !== reads * chunk.length) throw new Error(`read ${bytes} bytes, expected ${reads * chunk.length}`);
      resolve((used.user + used.system) / count);
    });
    socket.write('go');
  });
}

async function main(): Promise<void> {
  const child = fork(process.argv[1] ?? '', ['--serve', `--reads=${reads}`], {
    execArgv: process.execArgv,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const port = await new Promise<number>((resolve) =>
    child.once('message', (message) => {
      resolve(Number(message));
    }),
  );
  const figures: Record<'data' | 'onread', number[]> = { data: [], onread: [] };
  await run(port, 'data');
  await run(port, 'onread');
  for (let round = 0; round < rounds; round++) {
    for (const how of round % 2 === 0 ? (['data', 'onread'] as const) : (['onread', 'data'] as const))
      figures[how].push(await run(port, how));
  }
  for (const how of ['data', 'onread'] as const) {
    console.log(
      `${how.padEnd(6)} ${median(figures[how]).toFixed(1)} µs per read (rounds: ${figures[how].map((v) => v.toFixed(1)).join(', ')})`,
    );
  }
  child.kill();
}

if (process.argv.includes('--serve')) serve();
else await main();
