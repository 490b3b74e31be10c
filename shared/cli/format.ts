import type { PoolView } from '../app/poolAdmin';
import type { EnqueueReport } from './enqueue';

/** Text for people; `--json` prints the same facts as JSON for scripts. */

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export function formatPoolTable(pools: readonly PoolView[]): string {
  if (pools.length === 0) return 'no pools yet (a pool appears when its limit is set or its first job arrives)';
  const header = ['POOL', 'LIMIT', 'IN USE', 'FREE', 'WAITING'];
  const rows = [...pools]
    .sort((a, b) => a.name.localeCompare(b.name))
    .map((p) => [p.name, String(p.limit), String(p.inUse), String(Math.max(0, p.limit - p.inUse)), String(p.waiting)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  // The name is left-aligned, the numbers right-aligned.
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

export function formatSetLimit(pool: string, limit: number, admitted: number): string {
  if (limit === 0) return `pool ${pool}: limit 0, paused (running jobs go on; no new starts until the limit is raised)`;
  return `pool ${pool}: limit ${limit}, ${plural(admitted, 'waiting job')} let in`;
}

export interface EnqueueOutput {
  stdout: string;
  /** empty when every spec was sent */
  stderr: string;
}

/** What was sent (ids, in order) and what was not (with the 1-based position of the spec in the file). */
export function formatEnqueueReport(report: EnqueueReport, queueUrl: string): EnqueueOutput {
  const stdout = [`sent ${plural(report.sent.length, 'job')} to ${queueUrl}`, ...report.sent.map((id) => `  ${id}`)].join('\n');
  if (report.rejected.length === 0) return { stdout, stderr: '' };
  const rejected = [...report.rejected].sort((a, b) => a.index - b.index);
  const stderr = [
    `rejected ${plural(rejected.length, 'spec')} (not sent):`,
    ...rejected.map((r) => `  spec ${r.index + 1}: ${r.reason}`),
  ].join('\n');
  return { stdout, stderr };
}
