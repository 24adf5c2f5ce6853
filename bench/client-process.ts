/**
 * One client's process. bench/run.ts forks one per client (this transport, the SDK transport,
 * the raw fetch loop, the floor) and sends it scenario after scenario over IPC, rounds
 * alternating between the processes as before. Each client so runs alone in its process, as it
 * would in an application: in one shared process, the SDK `Client`'s code, Node's streams and
 * the promise machinery are fed by every client in turn, and each client pays for the others'
 * type feedback (deoptimised and optimised again, every round). `--in-process` keeps the old way.
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
