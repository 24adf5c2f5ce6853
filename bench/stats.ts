/** Small statistics and formatting helpers for the benchmark. */

export function median(values: readonly number[]): number {
  return percentile(values, 50);
}

/** Linear-interpolated percentile (p in 0..100); NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  const finite = values.filter((v) => Number.isFinite(v));
  if (finite.length === 0) return Number.NaN;
  const sorted = [...finite].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const lo = Math.floor(rank);
  const hi = Math.ceil(rank);
  const low = sorted[lo] ?? Number.NaN;
  const high = sorted[hi] ?? Number.NaN;
  return low + (high - low) * (rank - lo);
}

export function min(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v));
  return finite.length === 0 ? Number.NaN : Math.min(...finite);
}

export function max(values: readonly number[]): number {
  const finite = values.filter((v) => Number.isFinite(v));
  return finite.length === 0 ? Number.NaN : Math.max(...finite);
}

/** Three significant digits, thousands kept whole: 0.0123, 1.23, 12.3, 123, 12345. */
export function fmt(value: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toPrecision(3);
}

export function fmtRatio(value: number): string {
  return Number.isFinite(value) ? value.toFixed(2) : 'n/a';
}

/** A markdown table; cells are escaped for pipes. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const esc = (cell: string) => cell.replace(/\|/g, '\\|');
  const lines = [
    `| ${header.map(esc).join(' | ')} |`,
    `| ${header.map(() => '---').join(' | ')} |`,
    ...rows.map((row) => `| ${row.map(esc).join(' | ')} |`),
  ];
  return lines.join('\n');
}
