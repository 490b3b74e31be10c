import { type Snapshot, type SnapshotSource, takeSnapshot } from '../inspect/snapshot';
import { formatAge, formatDeadLetters, formatJobList, formatPoolDetails, table } from './formatInspect';
import type { CliIo } from './main';
import { terminalSafe } from './terminalText';

/** One screen of `sluice top`: the pools and their holders, who starts next, the latest jobs, the DLQ. */
export function formatTop(snapshot: Snapshot, title: string): string {
  const now = snapshot.at;
  const next = snapshot.pools.flatMap((p) =>
    p.next.slice(0, 5).map((w, i) => [p.name, String(i + 1), w.jobId, w.kind, w.target ?? '', formatAge(now - w.since)]),
  );
  const letters = snapshot.deadLetters ?? [];
  return [
    `sluice top  ${title}  ${new Date(now).toISOString().slice(11, 19)} UTC`,
    '',
    formatPoolDetails(snapshot.pools, now),
    '',
    next.length
      ? `NEXT TO START\n${table(['POOL', '#', 'JOB', 'KIND', 'NAME', 'WAITING FOR'], next, [1, 5])}`
      : 'NEXT TO START: nobody waits',
    '',
    `RECENT JOBS\n${formatJobList(snapshot.recentJobs.slice(0, 10), now)}`,
    '',
    `DEAD-LETTER QUEUE: ${letters.length}${letters.length ? `\n${formatDeadLetters(letters.slice(0, 5), now)}` : ''}`,
  ].join('\n');
}

/**
 * `sluice top`: redraws every `intervalMs` until Ctrl-C. With --once, or when stdout is not a terminal, prints one
 * screen and exits.
 */
export async function runTop(
  source: SnapshotSource,
  io: CliIo,
  options: { once: boolean; intervalMs: number },
  isTty: boolean = process.stdout.isTTY === true,
): Promise<number> {
  const title = source.table;
  if (options.once || !isTty) {
    io.stdout(formatTop(await takeSnapshot(source), title));
    return 0;
  }
  let stop = false;
  const quit = () => (stop = true);
  process.once('SIGINT', quit);
  try {
    while (!stop) {
      const screen = formatTop(await takeSnapshot(source), `${title}  (every ${options.intervalMs / 1000} s; Ctrl-C quits)`);
      // The only escape sequences on screen are these two (home, clear): the screen's text from data is made inert.
      process.stdout.write(`\x1b[H\x1b[2J${terminalSafe(screen)}\n`);
      const wake = Date.now() + options.intervalMs;
      while (!stop && Date.now() < wake) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    return 0;
  } finally {
    process.off('SIGINT', quit);
  }
}
