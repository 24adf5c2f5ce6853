/**
 * One client's process. For each scenario, bench/run.ts forks one per client (this transport,
 * the SDK transport, the raw fetch loop, the floor) and sends it the warm-up run and then each
 * round's run over IPC, rounds alternating between the processes as before. Each client so runs
 * alone in its process, as it would in an application, and each scenario starts on a process no
 * other scenario ran in. Measured: with every client in one process, each cost more per call
 * (the SDK `Client`'s code, Node's streams and the promise machinery fed by every client in turn);
 * a process that ran only this transport showed no extra cost for a fresh session after its first.
 * `--in-process` runs every client in the bench process.
 */
import { clientScenarios, type ClientScenarioId, type ScenarioContext, type ScenarioResult } from './scenarios.js';

export interface ClientRequest {
  seq: number;
  id: ClientScenarioId;
  ctx: ScenarioContext;
}

export type ClientReply = { seq: number; warnings: string[] } & ({ ok: true; result: ScenarioResult } | { ok: false; error: string });

let warnings: string[] = [];
process.on('warning', (warning) => {
  if (warnings.length < 20) warnings.push(`${warning.name}: ${warning.message}`);
});

async function handle(request: ClientRequest): Promise<ClientReply> {
  warnings = [];
  try {
    const result = await clientScenarios[request.id](request.ctx);
    return { seq: request.seq, warnings, ok: true, result };
  } catch (error) {
    return { seq: request.seq, warnings, ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

process.on('message', (message: ClientRequest) => {
  void handle(message).then((reply) => process.send?.(reply));
});
process.on('disconnect', () => process.exit(0));
