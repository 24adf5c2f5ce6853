/** N4, N6: the doctor's report: each finding printed as it is made, what is being checked before each probe, and the summary and exit code. */
import { exitCodes } from '../failure.js';

export type Level = 'ok' | 'note' | 'fault';

/** One line of the report. */
export interface Finding {
  check: 'era' | 'get' | 'keep-alive' | 'cors' | 'cookies' | 'redirect' | 'auth';
  level: Level;
  text: string;
  fix?: string;
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

/** Prints each finding as it is made: `FAULT  get         … — fix: …`, or a JSON line. */
export class Report {
  readonly findings: Finding[] = [];
  constructor(private readonly json: boolean) {}

  add(finding: Finding): void {
    this.findings.push(finding);
    if (this.json) {
      console.log(JSON.stringify({ event: 'check', ...finding }));
      return;
    }
    const level = finding.level === 'fault' ? 'FAULT' : finding.level;
    console.log(
      `${level.padEnd(6)} ${finding.check.padEnd(11)} ${finding.text}${finding.fix === undefined ? '' : ` — fix: ${finding.fix}`}`,
    );
  }

  /** N6: what is being checked now, printed before the probe goes out (a wait says how long it may last). */
  checking(check: Finding['check'], text: string): void {
    if (this.json) console.log(JSON.stringify({ event: 'checking', check, text }));
    else console.log(`${'…'.padEnd(6)} ${check.padEnd(11)} ${text}`);
  }

  get faults(): number {
    return this.findings.filter((f) => f.level === 'fault').length;
  }

  /** The summary line and the exit code: 8 with a fault, otherwise `otherwise`. */
  end(otherwise: number = exitCodes.ok): number {
    const notes = this.findings.filter((f) => f.level === 'note').length;
    const faults = this.faults;
    const exitCode = faults > 0 ? exitCodes.doctorFault : otherwise;
    const summary =
      faults + notes === 0
        ? 'no findings'
        : [faults > 0 ? `${faults} fault${faults > 1 ? 's' : ''}` : '', notes > 0 ? `${notes} note${notes > 1 ? 's' : ''}` : '']
            .filter((part) => part !== '')
            .join(', ');
    if (this.json) console.log(JSON.stringify({ event: 'result', faults, notes, exitCode }));
    else console.log(`result: ${summary}`);
    return exitCode;
  }
}
