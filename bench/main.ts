import { spawn } from 'node:child_process';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { ROOT } from '../local/infra/serviceDefinition';
import { type BenchParams, FULL, QUICK, RACE_ENGINES, type RaceEngine, runBench, type Scenario, SCENARIOS } from './runBench';

const USAGE = `npm run bench -- [options]
  --quick                 the smoke run: every scenario, tiny (about 1.5 minutes)
  --only LIST             scenarios to run, comma-separated: ${SCENARIOS.join(',')} (default: all)
  --out DIR               where results.json, RESULTS.md and the charts go (default: bench/)
  --sqs-endpoint URL      use running emulators (with --dynamodb-endpoint) instead of starting them
  --dynamodb-endpoint URL
  --in-process-emulators  start fauxqs and dynalite in this process (default: in a child process, a core of their own)
  --seed N                workload seed (default ${FULL.seed})
  --runs N                runs of the hand-off and throughput scenarios: the median is reported, each run beside it (default ${FULL.runs})
  --limit N               pool limit for hand-off, utilization and the overlapping requests window (default ${FULL.limit})
  --pollers N             parallel pollers of the acquirer's queue (default ${FULL.pollers}, the local stack's)
  --function-workers N    worker threads per function with an event source, as Lambda runs functions apart from the
                          harness (default ${FULL.functionWorkers}; 0: every function in the bench's own thread)
  --handoff-jobs N        jobs in the hand-off run (default ${FULL.handoff.jobs})
  --jobs N                jobs in the utilization run (default ${FULL.utilization.jobs})
  --median-ms N           median run time of the utilization run, ms: a 20-minute run (default ${FULL.utilization.runTimes.medianMs})
  --sigma X               log-normal shape of its run times (default ${FULL.utilization.runTimes.sigma})
  --weights-jobs N        jobs in each round of the weights scenario (default ${FULL.weights.jobs})
  --weights-median-ms N   median run time of its jobs, ms; shortest and longest scale with it (default ${FULL.weights.runTimes.medianMs})
  --run-limit-factor X    its second round's jobs declare runSeconds = their run time x X (default ${FULL.weights.runLimitFactor})
  --backoff-s N           the counter gate's visibility backoff, whole seconds (default ${FULL.utilization.backoffSeconds})
  --backlogs LIST         backlogs for requests per job (default ${FULL.requests.backlogs.join(',')})
  --window N              jobs measured per backlog (default ${FULL.requests.window})
  --throughput-jobs N     jobs in the throughput run (default ${FULL.throughput.jobs})
  --throughput-threads N  the throughput run once more with the functions in N worker threads each, on a stack of its
                          own (default ${FULL.throughput.threads}: not run)
  --schedule-jobs N       jobs spread over a minute in the schedule run (default ${FULL.schedule.spreadJobs})
  --schedule-spread-ms N  the time those jobs are spread over, ms (default ${FULL.schedule.spreadMs})
  --schedule-open N       scheduled jobs held far ahead meanwhile (default ${FULL.schedule.openJobs})
  --schedule-hotspot N    jobs due in the same second in the schedule run itself (default ${FULL.schedule.hotspotJobs}: the
                          hotspot scenario measures that second, on a limited and an unlimited pool)
  --race-engines LIST     engines of the hand-off race: ${RACE_ENGINES.join(',')} (default ${FULL.race.engines.join(',')}; DynamoDB Local
                          runs in the capacity run's process, dynalite on the emulators above)
  --race-rates LIST       completions per second of the hand-off race, each in turn (default ${FULL.race.rates.join(',')})
  --hotspot-jobs N        jobs due in one second on each pool of the hotspot, limited then unlimited (default ${FULL.hotspot.jobs})
  --capacity-limits LIST  pool limits of the capacity run (default ${FULL.capacity.limits.join(',')}); it runs on DynamoDB Local
                          (Java 17), in a process of its own, with the SQS of the emulators above
  --capacity-jobs N       jobs per limit: max(N, ${FULL.capacity.jobsPerSlot} x limit + ${FULL.capacity.extraJobs}) (default ${FULL.capacity.minJobs})
  --capacity-rate N       completions per second offered at every limit: runs of limit x 1000 / N ms (default ${FULL.capacity.offeredJobsPerSecond})
  --json                  also print results.json to stdout`;

async function spawnEmulators(): Promise<{ sqs: string; dynamodb: string; pid: number; stop(): Promise<void> }> {
  // tsx as a loader, not its CLI (which runs the script in a grandchild): the pid is the emulators' own process.
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'local/emulatorsMain.ts')], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout! });
  const first = await Promise.race([
    once(lines, 'line').then(([line]) => String(line)),
    once(child, 'exit').then(([code]) => Promise.reject(new Error(`emulators exited early with ${code}`))),
  ]);
  const { sqsEndpoint, dynamodbEndpoint } = JSON.parse(first) as { sqsEndpoint: string; dynamodbEndpoint: string };
  return {
    sqs: sqsEndpoint,
    dynamodb: dynamodbEndpoint,
    pid: child.pid!,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}

function numberList(value: string, flag: string): number[] {
  const list = value.split(',').map((x) => Number(x.trim()));
  if (list.length === 0 || list.some((n) => !Number.isInteger(n) || n <= 0))
    throw new Error(`--${flag} takes positive whole numbers separated by commas, got ${value}`);
  return list;
}

function raceEngines(value: string): RaceEngine[] {
  const list = value.split(',').map((x) => x.trim());
  for (const e of list)
    if (!(RACE_ENGINES as readonly string[]).includes(e)) throw new Error(`--race-engines: unknown engine ${e} (known: ${RACE_ENGINES.join(', ')})`);
  return list as RaceEngine[];
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string' },
      out: { type: 'string' },
      'sqs-endpoint': { type: 'string' },
      'dynamodb-endpoint': { type: 'string' },
      'in-process-emulators': { type: 'boolean', default: false },
      seed: { type: 'string' },
      runs: { type: 'string' },
      limit: { type: 'string' },
      pollers: { type: 'string' },
      'function-workers': { type: 'string' },
      'handoff-jobs': { type: 'string' },
      jobs: { type: 'string' },
      'median-ms': { type: 'string' },
      sigma: { type: 'string' },
      'backoff-s': { type: 'string' },
      'weights-jobs': { type: 'string' },
      'weights-median-ms': { type: 'string' },
      'run-limit-factor': { type: 'string' },
      backlogs: { type: 'string' },
      window: { type: 'string' },
      'throughput-jobs': { type: 'string' },
      'throughput-threads': { type: 'string' },
      'schedule-jobs': { type: 'string' },
      'schedule-open': { type: 'string' },
      'schedule-spread-ms': { type: 'string' },
      'schedule-hotspot': { type: 'string' },
      'race-engines': { type: 'string' },
      'race-rates': { type: 'string' },
      'hotspot-jobs': { type: 'string' },
      'capacity-limits': { type: 'string' },
      'capacity-jobs': { type: 'string' },
      'capacity-rate': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const num = (v: string | undefined, fallback: number, name: string, integer = true) => {
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
      throw new Error(`--${name} must be a positive ${integer ? 'whole ' : ''}number, got ${v}`);
    return n;
  };
  const base = values.quick ? QUICK : FULL;
  const medianMs = num(values['median-ms'], base.utilization.runTimes.medianMs, 'median-ms');
  const scale = medianMs / base.utilization.runTimes.medianMs;
  const weightsMedianMs = num(values['weights-median-ms'], base.weights.runTimes.medianMs, 'weights-median-ms');
  const params: BenchParams = {
    ...base,
    seed: num(values.seed, base.seed, 'seed'),
    runs: num(values.runs, base.runs, 'runs'),
    limit: num(values.limit, base.limit, 'limit'),
    pollers: num(values.pollers, base.pollers, 'pollers'),
    functionWorkers: values['function-workers'] === '0' ? 0 : num(values['function-workers'], base.functionWorkers, 'function-workers'),
    handoff: { ...base.handoff, jobs: num(values['handoff-jobs'], base.handoff.jobs, 'handoff-jobs') },
    utilization: {
      ...base.utilization,
      jobs: num(values.jobs, base.utilization.jobs, 'jobs'),
      runTimes: {
        medianMs,
        sigma: num(values.sigma, base.utilization.runTimes.sigma, 'sigma', false),
        minMs: Math.round(base.utilization.runTimes.minMs * scale),
        maxMs: Math.round(base.utilization.runTimes.maxMs * scale),
      },
      timeScale: medianMs / (20 * 60_000),
      backoffSeconds: num(values['backoff-s'], base.utilization.backoffSeconds, 'backoff-s'),
    },
    requests: {
      ...base.requests,
      backlogs: values.backlogs ? numberList(values.backlogs, 'backlogs') : base.requests.backlogs,
      window: num(values.window, base.requests.window, 'window'),
    },
    throughput: {
      ...base.throughput,
      jobs: num(values['throughput-jobs'], base.throughput.jobs, 'throughput-jobs'),
      threads: values['throughput-threads'] === '0' ? 0 : num(values['throughput-threads'], base.throughput.threads, 'throughput-threads'),
    },
    weights: {
      ...base.weights,
      jobs: num(values['weights-jobs'], base.weights.jobs, 'weights-jobs'),
      runTimes: {
        ...base.weights.runTimes,
        medianMs: weightsMedianMs,
        minMs: Math.round((base.weights.runTimes.minMs * weightsMedianMs) / base.weights.runTimes.medianMs),
        maxMs: Math.round((base.weights.runTimes.maxMs * weightsMedianMs) / base.weights.runTimes.medianMs),
      },
      runLimitFactor: num(values['run-limit-factor'], base.weights.runLimitFactor, 'run-limit-factor', false),
    },
    schedule: {
      ...base.schedule,
      spreadJobs: num(values['schedule-jobs'], base.schedule.spreadJobs, 'schedule-jobs'),
      spreadMs: num(values['schedule-spread-ms'], base.schedule.spreadMs, 'schedule-spread-ms'),
      openJobs: num(values['schedule-open'], base.schedule.openJobs, 'schedule-open'),
      hotspotJobs: num(values['schedule-hotspot'], base.schedule.hotspotJobs, 'schedule-hotspot'),
    },
    race: {
      ...base.race,
      rates: values['race-rates'] ? numberList(values['race-rates'], 'race-rates') : base.race.rates,
      engines: values['race-engines'] ? raceEngines(values['race-engines']) : base.race.engines,
    },
    hotspot: { ...base.hotspot, jobs: num(values['hotspot-jobs'], base.hotspot.jobs, 'hotspot-jobs') },
    capacity: {
      ...base.capacity,
      limits: values['capacity-limits'] ? numberList(values['capacity-limits'], 'capacity-limits') : base.capacity.limits,
      minJobs: num(values['capacity-jobs'], base.capacity.minJobs, 'capacity-jobs'),
      offeredJobsPerSecond: num(values['capacity-rate'], base.capacity.offeredJobsPerSecond, 'capacity-rate', false),
      seed: num(values.seed, base.seed, 'seed') + 3,
    },
  };
  params.cost = { ...params.cost, limit: params.limit };
  const only = values.only ? values.only.split(',').map((s) => s.trim()) : [];
  for (const s of only)
    if (!(SCENARIOS as readonly string[]).includes(s)) throw new Error(`--only: unknown scenario ${s} (known: ${SCENARIOS.join(', ')})`);
  if (!!values['sqs-endpoint'] !== !!values['dynamodb-endpoint'])
    throw new Error('give both --sqs-endpoint and --dynamodb-endpoint, or neither');

  // Each line with the seconds since the bench started, to see where its time goes.
  const startedAt = Date.now();
  const log = (line: string) =>
    process.stderr.write(line ? `[${String(Math.round((Date.now() - startedAt) / 1000)).padStart(4)} s] ${line}\n` : '\n');
  const [load1] = os.loadavg();
  if (load1! > 0.5)
    log(`note: load average ${load1!.toFixed(2)} on ${os.cpus().length} cores: other work on this machine will show up as latency`);
  let emulators: Awaited<ReturnType<typeof spawnEmulators>> | undefined;
  let endpoints = values['sqs-endpoint'] ? { sqs: values['sqs-endpoint'], dynamodb: values['dynamodb-endpoint']! } : undefined;
  let where = endpoints ? 'given endpoints' : 'in process';
  if (!endpoints && !values['in-process-emulators']) {
    emulators = await spawnEmulators();
    endpoints = { sqs: emulators.sqs, dynamodb: emulators.dynamodb };
    where = 'in a child process';
  }
  const argv = process.argv.slice(2);
  try {
    const { results, files } = await runBench({
      params,
      only: only as Scenario[],
      ...(endpoints ? { endpoints } : {}),
      emulators: where,
      ...(emulators ? { emulatorPid: emulators.pid } : {}),
      outDir: path.resolve(values.out ?? path.join(ROOT, 'bench')),
      command: `npm run bench${argv.length ? ` -- ${argv.join(' ')}` : ''}`,
      log,
    });
    log('');
    for (const g of results.goals) log(`${g.met ? 'met   ' : g.status ? 'PART  ' : 'MISSED'} ${g.goal}: ${g.measured} (target ${g.target})`);
    if (results.costPerMillionJobsUsd !== null) log(`cost per million jobs on AWS: $${results.costPerMillionJobsUsd}`);
    log(`took ${results.durationSeconds} s; wrote ${files.map((f) => path.relative(process.cwd(), f)).join(', ')}`);
    if (values.json) console.log(JSON.stringify(results));
    return 0;
  } finally {
    await emulators?.stop();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  },
);
