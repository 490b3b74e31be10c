import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { ROOT } from '../local/infra/serviceDefinition';
import { rateBookingTuning } from '../shared/adapters/dynamodb/leases/rateBookings';
import { startHarness } from './harness';
import { type RateResult, runRateLimit } from './scenarios/flowControl';

const USAGE = `npx tsx bench/rateMain.ts [options]
Start rates under a burst: every job of a rated pool (limit 250, slots to spare) sent at once; how many starts the
rate allows are made, and how many writes to the limit's counter are refused per start (bookings losing the race).
  --runs N        runs of each (rate, mode): the median is reported with the spread (default 3)
  --variants LIST rate:jobs pairs (default 2:40,20:100,50:200)
  --modes LIST    booking modes compared back to back, of ${Object.keys(rateModes()).join(',')} (default all)
  --pollers N     parallel pollers of the acquirer's queue (default 4, the local stack's)
  --out FILE      write the results as JSON (default bench/rate-burst.json)
  --render FILE   print the table of results written before (no run)`;

/** The booking modes compared (rateBookingTuning, shared/adapters/dynamodb/leases/rateBookings.ts). */
function rateModes(): Record<string, Partial<typeof rateBookingTuning>> {
  return { 'all-at-once': { inTurn: false }, 'in-turn': { inTurn: true } };
}

async function spawnEmulators(): Promise<{ sqs: string; dynamodb: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'local/emulatorsMain.ts')], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout! });
  const [line] = await once(lines, 'line');
  const { sqsEndpoint, dynamodbEndpoint } = JSON.parse(String(line)) as { sqsEndpoint: string; dynamodbEndpoint: string };
  return {
    sqs: sqsEndpoint,
    dynamodb: dynamodbEndpoint,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

type Results = Record<string, Record<string, RateResult[]>>; // mode -> "rate:jobs" -> runs

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      variants: { type: 'string', default: '2:40,20:100,50:200' },
      modes: { type: 'string' },
      pollers: { type: 'string', default: '4' },
      out: { type: 'string', default: path.join(ROOT, 'bench/rate-burst.json') },
      render: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return void console.log(USAGE);
  if (values.render) return void console.log(renderTable((JSON.parse(fs.readFileSync(values.render, 'utf8')) as { results: Results }).results));
  const runs = Number(values.runs);
  const variants = values.variants!.split(',').map((pair) => {
    const [rate, jobs] = pair.split(':').map(Number);
    return { startsPerSecond: rate!, jobs: jobs! };
  });
  const modes = values.modes ? values.modes.split(',') : Object.keys(rateModes());
  const startedAt = Date.now();
  const log = (line: string) => process.stderr.write(`[${String(Math.round((Date.now() - startedAt) / 1000)).padStart(4)} s] ${line}\n`);
  const emulators = await spawnEmulators();
  const results: Results = Object.fromEntries(modes.map((mode) => [mode, {}]));
  const defaults = { ...rateBookingTuning };
  // One stack (the SDK clients are the process's): the mode is switched between scenarios, each on a pool of its own.
  const pool = (mode: string, v: (typeof variants)[number], run: number) => `rate-${mode}-${v.startsPerSecond}-${v.jobs}-${run}`;
  const pools: Record<string, number> = {};
  for (let run = 1; run <= runs; run++) for (const mode of modes) for (const v of variants) pools[pool(mode, v, run)] = 250;
  try {
    const h = await startHarness({
      pools,
      log,
      pollerConcurrency: Number(values.pollers),
      functionWorkers: 0, // the booking mode is this thread's
      endpoints: { sqs: emulators.sqs, dynamodb: emulators.dynamodb },
    });
    try {
      for (let run = 1; run <= runs; run++)
        for (const v of variants)
          for (const mode of modes) {
            Object.assign(rateBookingTuning, defaults, rateModes()[mode]);
            const changes0 = JSON.stringify([...h.tracer.slotChanges]);
            const result = await runRateLimit(h, { pool: pool(mode, v, run), limit: 250, ...v, runMs: 200, timeoutMs: 300_000 });
            log(`run ${run}, ${mode}, ${v.startsPerSecond}/s x ${v.jobs}: ${JSON.stringify(result)}`);
            if (process.env.RATE_DEBUG) log(`slot changes before ${changes0}, after ${JSON.stringify([...h.tracer.slotChanges])}`);
            (results[mode]![`${v.startsPerSecond}:${v.jobs}`] ??= []).push(result);
          }
    } finally {
      await h.stop();
    }
  } finally {
    Object.assign(rateBookingTuning, defaults);
    await emulators.stop();
  }
  fs.writeFileSync(values.out!, `${JSON.stringify({ params: { runs, variants, pollers: Number(values.pollers) }, results }, null, 1)}\n`);
  console.log(renderTable(results));
  log(`took ${Math.round((Date.now() - startedAt) / 1000)} s; wrote ${path.relative(process.cwd(), values.out!)}`);
}

/** The results as a Markdown table: the median over runs of each figure, with its range. */
function renderTable(results: Results): string {
  const rows = [
    '| booking | rate/s | jobs | starts of those the rate allows | refused counter writes per start | counter writes per start | most starts in any 1 s |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  const fig = (xs: number[]) => `${round(median(xs))} (${round(Math.min(...xs))}-${round(Math.max(...xs))})`;
  for (const [mode, byVariant] of Object.entries(results))
    for (const [variant, at] of Object.entries(byVariant)) {
      const [rate, jobs] = variant.split(':');
      rows.push(
        `| ${mode} | ${rate} | ${jobs} | ${fig(at.map((r) => r.startsOfAllowed))} | ${fig(at.map((r) => r.failedWritesPerStart))} | ${fig(at.map((r) => r.counterWritesPerStart))} | ${fig(at.map((r) => r.maxStartsInAnySecond))} |`,
      );
    }
  return rows.join('\n');
}

const round = (x: number) => (Math.abs(x) >= 10 ? Math.round(x) : Math.round(x * 1000) / 1000);

main().then(
  () => process.exit(0),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
