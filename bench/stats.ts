/** Small statistics and formatting helpers for the benchmark. */

const finite = (values: readonly number[]) => values.filter((v) => Number.isFinite(v));

/** Linear-interpolated percentile (p in 0..100); NaN for no values. */
export function percentile(values: readonly number[], p: number): number {
  const sorted = finite(values).sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const [low, high] = [sorted[Math.floor(rank)] ?? Number.NaN, sorted[Math.ceil(rank)] ?? Number.NaN];
  return low + (high - low) * (rank - Math.floor(rank));
}

export const median = (values: readonly number[]): number => percentile(values, 50);
export const min = (values: readonly number[]): number => (finite(values).length === 0 ? Number.NaN : Math.min(...finite(values)));
export const max = (values: readonly number[]): number => (finite(values).length === 0 ? Number.NaN : Math.max(...finite(values)));

/** Three significant digits, thousands kept whole: 0.0123, 1.23, 12.3, 123, 12345. */
export function fmt(value: number): string {
  const abs = Math.abs(value);
  if (!Number.isFinite(value)) return 'n/a';
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  return abs >= 100 ? value.toFixed(0) : abs >= 10 ? value.toFixed(1) : abs >= 1 ? value.toFixed(2) : value.toPrecision(3);
}

export const fmtRatio = (value: number): string => (Number.isFinite(value) ? value.toFixed(2) : 'n/a');

/** A markdown table; cells are escaped for pipes. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.map((cell) => cell.replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
