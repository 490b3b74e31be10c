import { parseArgs } from 'node:util';
import type { ViolationCategory } from './invariants';
import { type Engine, explore, type SchedulerMode } from './run';
import { ALL_FAULTS, type FaultName, type ScenarioOptions } from './scenario';
import type { JobKind } from '../../../shared/kinds/registry';
import { STALE_WRITERS } from './families';

const USAGE = `Explores interleavings of Sluice's services on the in-memory ports, fast-check's scheduler deciding the order of
every port call, and prints the shrunk counterexample schedule or "N schedules, no violation".

  tsx test/support/explore/main.ts [--runs N] [--seed S] [options]     (npm run test:explore -- --runs N --seed S)

  --runs N            scenarios to run (default 500)
  --seed S            fast-check seed (default: random; printed)
  --path P            replay the counterexample at this fast-check path (with its --seed)
  --faults a,b        fault kinds the generator may use: ${ALL_FAULTS.join(', ')}, or none (default: all)
  --no-limit-changes  no setLimit steps
  --limit-weight W    weight of setLimit steps (default 1, against 8 for a delivery)
  --call-fault-rarity R   an invocation has a call fault (lost, crash, contended, dynamo, stall) one time in 1 + R
                      (default 5)
  --kinds a,b         job kinds: appflow, glue (default: both)
  --stale-writers     the stale writers' family (test/support/explore/families.ts STALE_WRITERS): every other
                      invocation holds a write to a job record while others move the job on (other scenario flags
                      are ignored)
  --flow-control      jobs name keyed limits, have weights, priorities and fairness keys; setLimit steps change
                      keyed limits too
  --rated-pools       every pool has a start rate (100 starts a second: a burst's bookings race)
  --engine E          memory (the in-memory fake, every port call a step; default) or dynalite (the real DynamoDB
                      adapters on dynalite, every DynamoDB request a step: slower, fewer schedules)
  --max-jobs N, --max-waves N, --max-steps N   scenario size (defaults 4, 4, 6 steps per wave)
  --seeds K           run K seeds in turn (S, S+1, ...): one line per seed, each distinct violation printed once
  --time-limit MS     stop exploring and shrinking after MS milliseconds
  --no-shrink         report the first counterexample as found (no shrinking: quicker, longer schedule)
  --schedule-steps N, --schedule-ms MS
                      one schedule's bounds: past either it is reported as a violation, did-not-finish ("schedule
                      did not finish"), with its seed (defaults: memory 20000 steps, 120 s; dynalite 5000, 300 s)
  --ignore a,b        do not report these violation categories (look past known ones): over-limit, second-run,
                      not-terminal, ledger-run-mismatch, slot-leak, stranded-waiter, dead-not-in-dlq,
                      dead-lettered-but-ran, did-not-settle, did-not-finish, unexpected-error
  --scheduler M       random (fast-check's fc.scheduler(), seeded per scenario; default) or choices (fc.schedulerFor
                      driven by a shrinkable list of choices: the schedule shrinks too)
  --fc-report         also print fast-check's own scheduler report (a schedulerFor\`...\` template)
`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '500' },
      seed: { type: 'string' },
      path: { type: 'string' },
      faults: { type: 'string' },
      'no-limit-changes': { type: 'boolean', default: false },
      'flow-control': { type: 'boolean', default: false },
      'stale-writers': { type: 'boolean', default: false },
      'rated-pools': { type: 'boolean', default: false },
      engine: { type: 'string', default: 'memory' },
      kinds: { type: 'string' },
      seeds: { type: 'string', default: '1' },
      'max-jobs': { type: 'string' },
      'limit-weight': { type: 'string' },
      'call-fault-rarity': { type: 'string' },
      'max-waves': { type: 'string' },
      'max-steps': { type: 'string' },
      'time-limit': { type: 'string' },
      'schedule-steps': { type: 'string' },
      'schedule-ms': { type: 'string' },
      'fc-report': { type: 'boolean', default: false },
      'no-shrink': { type: 'boolean', default: false },
      ignore: { type: 'string' },
      scheduler: { type: 'string', default: 'random' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  const faults = values.faults === undefined ? undefined : values.faults === 'none' ? [] : (values.faults.split(',') as FaultName[]);
  const unknown = faults?.filter((f) => !ALL_FAULTS.includes(f)) ?? [];
  if (unknown.length > 0) throw new Error(`unknown fault kinds: ${unknown.join(', ')}`);
  const scenario: ScenarioOptions = values['stale-writers']
    ? STALE_WRITERS
    : {
        ...(faults && { faults }),
        limitChanges: !values['no-limit-changes'],
        ...(values['flow-control'] && { flowControl: true }),
        ...(values['rated-pools'] && { ratedPools: true }),
        ...(values.kinds && { kinds: values.kinds.split(',') as JobKind[] }),
        ...(values['limit-weight'] && { limitWeight: Number(values['limit-weight']) }),
        ...(values['call-fault-rarity'] && { callFaultRarity: Number(values['call-fault-rarity']) }),
        ...(values['max-jobs'] && { maxJobs: Number(values['max-jobs']) }),
        ...(values['max-waves'] && { maxWaves: Number(values['max-waves']) }),
        ...(values['max-steps'] && { maxSteps: Number(values['max-steps']) }),
      };
  const firstSeed = values.seed !== undefined ? Number(values.seed) : Math.floor(Math.random() * 2 ** 31);
  const seeds = Number(values.seeds);
  const seen = new Set<string>();
  let failed = false;
  for (let i = 0; i < seeds; i++) {
    const outcome = await explore({
      runs: Number(values.runs),
      seed: firstSeed + i,
      ...(values.path !== undefined && { path: values.path }),
      scenario,
      ...(values['time-limit'] !== undefined && { timeLimitMs: Number(values['time-limit']) }),
      scheduleLimits: {
        ...(values['schedule-steps'] !== undefined && { maxSteps: Number(values['schedule-steps']) }),
        ...(values['schedule-ms'] !== undefined && { maxMs: Number(values['schedule-ms']) }),
      },
      fcReport: values['fc-report'],
      ...(values['no-shrink'] && { shrink: false }),
      scheduler: values.scheduler as SchedulerMode,
      engine: values.engine as Engine,
      ...(values.ignore && { ignore: values.ignore.split(',') as ViolationCategory[] }),
    });
    const perRun = outcome.runs > 0 ? (outcome.elapsedMs / outcome.runs).toFixed(1) : '-';
    if (outcome.ok) {
      process.stdout.write(`seed ${outcome.seed}: ${outcome.text} (${outcome.elapsedMs} ms, ${perRun} ms per schedule)\n`);
      continue;
    }
    failed = true;
    const firstLine = outcome.text.split('\n', 2).join(' |');
    const key = outcome.text.split('\n')[1]!.replace(/\d+/g, 'N');
    if (seeds > 1 && seen.has(key)) {
      process.stdout.write(`seed ${outcome.seed}: ${firstLine}\n`);
      continue;
    }
    seen.add(key);
    process.stdout.write(`${'='.repeat(100)}\nseed ${outcome.seed}:\n${outcome.text}\n\n`);
  }
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${(error as Error)?.stack ?? String(error)}\n`);
    process.exit(2);
  },
);
