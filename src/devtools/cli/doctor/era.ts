/** N4: the era check's wording: how a probe was refused. */
import { isRecord } from '../../../record.js';
import type { Answer } from './probes.js';

/** The rpc error's text, for the era line: `JSON-RPC error -32601 Method not found`, or the HTTP status. */
export function refusal(answer: Answer): string {
  const error = answer.message?.error;
  if (isRecord(error)) return `JSON-RPC error ${String(error.code)}${typeof error.message === 'string' ? ` ${error.message}` : ''}`;
  return `HTTP ${answer.status}`;
}
