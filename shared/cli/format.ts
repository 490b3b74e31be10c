import type { PoolView } from '../app/poolAdmin';
import type { EnqueueReport } from './enqueue';
import type { KnownJob } from '../inspect/jobs';

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

/** How many known ids are named (the count says all). */
const KNOWN_NAMED = 10;

/**
 * Ids the ledger already had: sent, they run nothing (the acquirer runs an id once). Undefined when there are none.
 */
export function formatKnown(known: readonly KnownJob[] | undefined): string | undefined {
  if (!known?.length) return undefined;
  const named = known.slice(0, KNOWN_NAMED).map((k) => `${k.jobId} (${k.state})`);
  const more = known.length > KNOWN_NAMED ? ` and ${known.length - KNOWN_NAMED} more` : '';
  return `${known.length} already known (ran or running): ${named.join(', ')}${more}: each id runs once, so these run nothing again (send them with new ids to run them again)`;
}

/** What was sent (ids, in order) and what was not (with the 1-based position of the spec in the file). */
export function formatEnqueueReport(report: EnqueueReport, queueUrl: string): EnqueueOutput {
  const known = formatKnown(report.known);
  const stdout = [
    `sent ${plural(report.sent.length, 'job')} to ${queueUrl}`,
    ...report.sent.map((id) => `  ${id}`),
    ...(known ? [known] : []),
  ].join('\n');
  if (report.rejected.length === 0) return { stdout, stderr: '' };
  const rejected = [...report.rejected].sort((a, b) => a.index - b.index);
  const stderr = [
    `rejected ${plural(rejected.length, 'spec')} (not sent):`,
    ...rejected.map((r) => `  spec ${r.index + 1}: ${r.reason}`),
  ].join('\n');
  return { stdout, stderr };
}
