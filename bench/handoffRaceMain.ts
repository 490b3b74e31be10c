import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { ROOT } from '../local/infra/serviceDefinition';
import { type RaceLevel, type RaceParams, runHandoffRace } from './scenarios/handoffRace';

const USAGE = `npx tsx bench/handoffRaceMain.ts [options]
Hand-off races: one pool (limit 1,000, full, a backlog waiting) whose runs end at each rate in turn, many releasers
at once; the hand-offs back to back: strict head-first (as before), the spread by job id only, the spread by hand-off
ticket; on DynamoDB Local and dynalite.
  --runs N          runs of each (engine, hand-off) pair: the median is reported with the spread (default 3)
  --rates LIST      completions per second (default 10,25,50,100,200)
  --seconds N       seconds of completions at each rate (default 3; at least 60 hand-offs)
  --releasers N     releaser containers (default 32)
  --limit N         pool limit (default 1000)
  --engines LIST    dynamodb-local,dynalite (default both)
  --modes LIST      of head,spread-by-id,spread (default head,spread)
  --out FILE        write the results as JSON (default bench/handoff-race.json)
  --render FILE     print the table of results written before (no run)`;

/** The hand-offs compared: strict head-first (as before the spread), the spread by job id only, the spread by tickets. */
const MODES = {
  head: { spreadWidth: 1, tickets: false },
  'spread-by-id': { spreadWidth: 64, tickets: false },
  spread: { spreadWidth: 64, tickets: true },
} as const;
const MODE_NAMES: Record<string, string> = { head: 'head first', 'spread-by-id': 'spread by job id', spread: 'spread by ticket' };

async function spawnDynalite(): Promise<{ endpoint: string; stop(): Promise<void> }> {
  // The emulators in a child process, a core of their own (their dynalite: transactions included).
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'local/emulatorsMain.ts')], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout! });
  const [line] = await once(lines, 'line');
  const { dynamodbEndpoint } = JSON.parse(String(line)) as { dynamodbEndpoint: string };
  return {
    endpoint: dynamodbEndpoint,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function startEngine(engine: string): Promise<{ endpoint: string; stop(): Promise<void> }> {
  if (engine === 'dynalite') return spawnDynalite();
  const { startDynamoDbLocal } = await import('../test/support/dynamodbLocal');
  return startDynamoDbLocal({ timeoutMs: 120_000, jit: 'full' });
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      rates: { type: 'string', default: '10,25,50,100,200' },
      seconds: { type: 'string', default: '3' },
      releasers: { type: 'string', default: '32' },
      limit: { type: 'string', default: '1000' },
      engines: { type: 'string', default: 'dynamodb-local,dynalite' },
      modes: { type: 'string', default: 'head,spread' },
      out: { type: 'string', default: path.join(ROOT, 'bench/handoff-race.json') },
      render: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) return void console.log(USAGE);
  if (values.render) {
    const saved = JSON.parse(fs.readFileSync(values.render, 'utf8')) as { params: RaceParams; results: Record<string, Record<string, RaceLevel[][]>> };
    return void console.log(renderTable(saved.results, saved.params.rates));
  }
  const runs = Number(values.runs);
  const modes = values.modes!.split(',');
  const base: Omit<RaceParams, 'spreadWidth' | 'tickets' | 'seed'> = {
    limit: Number(values.limit),
    rates: values.rates!.split(',').map(Number),
    seconds: Number(values.seconds),
    minHandoffs: 60,
    releasers: Number(values.releasers),
  };
  const startedAt = Date.now();
  const log = (line: string) => process.stderr.write(`[${String(Math.round((Date.now() - startedAt) / 1000)).padStart(4)} s] ${line}\n`);
  const results: Record<string, Record<string, RaceLevel[][]>> = {};
  for (const engine of values.engines!.split(',')) {
    const started = await startEngine(engine);
    log(`${engine} at ${started.endpoint}`);
    results[engine] = Object.fromEntries(modes.map((mode) => [mode, []]));
    try {
      for (let run = 0; run < runs; run++) {
        for (const [mode, options] of Object.entries(MODES)) {
          if (!modes.includes(mode)) continue;
          log(`${engine}, run ${run + 1}, ${mode}`);
          const { levels } = await runHandoffRace(
            started.endpoint,
            `race-${mode}-${run}`,
            { ...base, seed: 7 + run, ...options },
            log,
          );
          results[engine]![mode]!.push(levels);
        }
      }
    } finally {
      await started.stop();
    }
  }
  fs.writeFileSync(values.out!, `${JSON.stringify({ params: { ...base, runs }, results }, null, 1)}\n`);
  console.log(renderTable(results, base.rates));
  log(`took ${Math.round((Date.now() - startedAt) / 1000)} s; wrote ${path.relative(process.cwd(), values.out!)}`);
}

/** The results as a Markdown table: the median over runs of each figure, with its range. */
function renderTable(results: Record<string, Record<string, RaceLevel[][]>>, rates: number[]): string {
  const rows: string[] = [];
  rows.push(
    '| engine | hand-off | completions/s | lost races per hand-off | of which before spreading | their write units per hand-off | tickets per hand-off | hand-off p50 ms | hand-off p99 ms |',
  );
  rows.push('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
  const fig = (xs: number[]) => `${round(median(xs))} (${round(Math.min(...xs))}-${round(Math.max(...xs))})`;
  for (const [engine, modes] of Object.entries(results))
    for (const [mode, levelRuns] of Object.entries(modes))
      for (const [i, rate] of rates.entries()) {
        const at = levelRuns.map((levels) => levels[i]!);
        if (at.length === 0) continue;
        const before = mode === 'spread' && at.every((l) => l.lostWithoutTicketPerHandoff !== undefined);
        rows.push(
          `| ${engine} | ${MODE_NAMES[mode]} | ${rate} | ${fig(at.map((l) => l.lostRacesPerHandoff))} | ${before ? fig(at.map((l) => l.lostWithoutTicketPerHandoff)) : ''} | ${fig(at.map((l) => l.cancelledWriteUnitsPerHandoff))} | ${fig(at.map((l) => l.ticketsPerHandoff))} | ${fig(at.map((l) => l.handoffP50Ms))} | ${fig(at.map((l) => l.handoffP99Ms))} |`,
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
