import type { JobRecord } from '../ports/jobLedger';
import type { DeadLetter } from '../inspect/deadLetters';
import type { PoolDetail } from '../inspect/pools';
import type { RedriveResult } from '../inspect/redrive';
import { isJobKind, kindOf } from '../kinds/registry';
import { targetNameOf } from '../inspect/targetName';
import { terminalSafe } from './terminalText';

/** Text for `pool list`, `jobs`, `dlq` and `top`; `--json` prints the same facts as JSON. */

/** `45s`, `4m 05s`, `2h 03m`, `3d 04h`: how long, to the two largest units. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  const pad = (n: number) => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`;
  return `${Math.floor(s / 86_400)}d ${pad(Math.floor((s % 86_400) / 3600))}h`;
}

/**
 * Columns padded to their widest cell; `right` lists the right-aligned ones (numbers). Cells come from data: each is
 * made inert (no escape sequences or control characters) and kept on one line before it is measured.
 */
export function table(header: string[], rows: string[][], right: number[] = []): string {
  rows = rows.map((row) => row.map((cell) => terminalSafe(cell).replace(/[\t\n]+/g, ' ')));
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (right.includes(i) ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

export function formatPoolDetails(pools: readonly PoolDetail[], now: number): string {
  if (pools.length === 0) return 'no pools yet (a pool appears when its limit is set or its first job arrives)';
  const rated = pools.some((p) => p.startsPerSecond !== undefined);
  const counts = table(
    // The start rate only when some limit has one.
    ['POOL', 'LIMIT', 'IN USE', 'FREE', 'WAITING', ...(rated ? ['RATE'] : [])],
    pools.map((p) => [
      p.name,
      p.unlimited ? 'unlimited' : String(p.limit),
      // Units, and (an adopting pool read without its jobs' records) the jobs its counter does not count yet, apart.
      p.uncountedJobs === undefined ? String(p.inUse) : `${p.inUse} + ${p.uncountedJobs} jobs`,
      // An adopting pool admits nothing until the jobs started while it was unlimited are counted.
      p.unlimited ? '-' : p.adopting ? '0' : String(Math.max(0, p.limit - p.inUse)),
      String(p.waiting),
      ...(rated ? [p.startsPerSecond === undefined ? '-' : `${p.startsPerSecond}/s`] : []),
    ]),
    [1, 2, 3, 4],
  );
  const held = pools.flatMap((p) => p.held.map((h) => ({ pool: p.name, ...h })));
  if (held.length === 0) return counts;
  const holders = table(
    ['POOL', 'HOLDER', 'KIND', 'NAME', 'HELD FOR', ...(held.some((h) => h.state) ? ['STATE', 'RUN'] : [])],
    held.map((h) => [
      h.pool,
      h.jobId,
      h.kind,
      h.target ?? '',
      formatAge(now - h.since),
      ...(h.state ? [h.state, h.executionId ?? ''] : []),
    ]),
    [4],
  );
  return `${counts}\n\n${holders}`;
}

const when = (at: number | undefined, now: number) =>
  at === undefined ? undefined : `${new Date(at).toISOString()} (${formatAge(now - at)} ago)`;

/** The job's notBefore as its spec says it, and when that is from now. */
function notBeforeOf(notBefore: string, now: number): string {
  const at = Date.parse(notBefore);
  if (Number.isNaN(at)) return notBefore;
  return `${notBefore} (${at > now ? `in ${formatAge(at - now)}` : `${formatAge(now - at)} ago`})`;
}

/** What the job starts (flow, Glue job, state machine), by its kind's definition; empty for a kind this Sluice does not know. */
function targetOf(record: JobRecord): string {
  if (!isJobKind(record.kind)) return '';
  try {
    return kindOf(record.kind).target(record.spec as never);
  } catch {
    return '';
  }
}

export function formatJob(record: JobRecord, now: number): string {
  const spec = record.spec as { arguments?: Record<string, string>; input?: unknown; payload?: unknown; notBefore?: string };
  const rows: Array<[string, string | undefined]> = [
    ['state', record.state],
    ['pool', record.pool],
    ['kind', `${record.kind} ${targetOf(record)}`.trim()],
    ['arguments', spec.arguments ? JSON.stringify(spec.arguments) : undefined],
    ['input', spec.input !== undefined ? JSON.stringify(spec.input) : undefined],
    ['payload', spec.payload !== undefined ? JSON.stringify(spec.payload) : undefined],
    ['attempts', String(record.attempts)],
    ['run id', record.executionId],
    ['slot', record.lease ? `held in ${record.lease.pool} for ${formatAge(now - record.lease.since)}` : undefined],
    ['not before', spec.notBefore !== undefined ? notBeforeOf(spec.notBefore, now) : undefined],
    ['first seen', when(record.firstSeenAt, now)],
    ['first start', when(record.firstStartAt, now)],
    ['started', when(record.startedAt, now)],
    ['last heartbeat', when(record.heartbeatAt, now)],
    ['ended', when(record.endedAt, now)],
    ['updated', when(record.updatedAt, now)],
    ['last error', record.lastError],
    ['dead-lettered', when(record.deadLetteredAt, now)],
  ];
  const present = rows.filter((r): r is [string, string] => r[1] !== undefined);
  const width = Math.max(...present.map(([k]) => k.length));
  return [`job ${terminalSafe(record.jobId)}`, ...present.map(([k, v]) => `  ${k.padEnd(width)}  ${terminalSafe(v)}`)].join('\n');
}

export function formatJobList(records: readonly JobRecord[], now: number): string {
  if (records.length === 0) return 'no jobs match';
  return table(
    ['JOB', 'POOL', 'KIND', 'NAME', 'STATE', 'ATTEMPTS', 'UPDATED', 'RUN', 'LAST ERROR'],
    records.map((r) => [
      r.jobId,
      r.pool,
      r.kind,
      targetNameOf(r.kind, r.spec) ?? '',
      r.state,
      String(r.attempts),
      `${formatAge(now - r.updatedAt)} ago`,
      r.executionId ?? '',
      oneLine(r.lastError ?? '', 60),
    ]),
    [5],
  );
}

/** How wide a dead letter's reason is wrapped (it is shown whole, under its message's row). */
const REASON_WIDTH = 100;

/** A row per message, each followed by its reason, whole, wrapped and indented. */
export function formatDeadLetters(letters: readonly Omit<DeadLetter, 'receiptHandle'>[], now: number): string {
  if (letters.length === 0) return 'the dead-letter queue is empty';
  const [header, ...rows] = table(
    ['JOB', 'POOL', 'NAME', 'AGE', 'MESSAGE'],
    letters.map((l) => [l.jobId ?? '(not a job)', l.pool ?? '', l.target ?? '', formatAge(now - l.sentAt), l.messageId]),
    [3],
  ).split('\n');
  const lines = [header!];
  letters.forEach((l, i) => {
    const reason = l.reason ?? `failed in the acquirer maxReceiveCount times (see its logs for message ${l.messageId})`;
    lines.push(rows[i]!, ...wrap(terminalSafe(reason), REASON_WIDTH).map((line) => `    ${line}`));
  });
  return lines.join('\n');
}

export function formatRedrive(results: readonly RedriveResult[]): string {
  if (results.length === 0) return 'nothing to redrive: no such message in the dead-letter queue';
  const sent = results.filter((r) => r.outcome === 'resent');
  const lines = [`re-sent ${sent.length} of ${results.length} dead-lettered ${results.length === 1 ? 'job' : 'jobs'}`];
  for (const r of results)
    lines.push(
      `  ${terminalSafe(r.jobId ?? `message ${r.messageId}`)}: ${r.outcome === 'resent' ? 'sent to the job queue' : `kept in the DLQ: ${terminalSafe(r.reason ?? '')}`}`,
    );
  return lines.join('\n');
}

/** Words into lines of at most `width` characters (a longer word has a line of its own); whitespace runs are one space. */
export function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  return line ? [...lines, line] : lines;
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
