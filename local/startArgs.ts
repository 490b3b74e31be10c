import { MAX_POOL_LIMIT } from '../shared/domain/pool';
import { base } from '../shared/domain/job';
import { StartUsageError } from '../shared/errors';
import { isJobKind, type JobKind, KINDS } from '../shared/kinds/registry';
import { DEFAULT_WORKLOAD, defaultMaxMs, MAX_MS_PER_MEDIAN, type WorkloadOptions } from './workload';

/** Where the resident stack listens by default (127.0.0.1 only); `0` in a flag takes any free port. */
export const DEFAULT_PORTS = { sqs: 8471, dynamodb: 8472, jobApi: 8473 } as const;

export const START_USAGE = `npm start -- [options]          a sample workload through the whole local stack, then a summary
npm start -- --serve [options]  the local stack stays up until Ctrl-C, for your own jobs (sluice enqueue, sluice top, ...)
npm start -- --sets FILE        a day of the job sets of FILE (e.g. docs/examples/jobs.yml) on compressed time, each run's progress

Sample workload:
  --jobs N          jobs in the sample workload (default ${DEFAULT_WORKLOAD.jobs}; with --serve: none unless given)
  --limit N         the pool's concurrency limit, 0..${MAX_POOL_LIMIT} (default 8; 0 pauses the pool)
  --median-ms N     median simulated run time in ms, log-normal (default ${DEFAULT_WORKLOAD.medianMs})
  --sigma X         log-normal shape of run times (default ${DEFAULT_WORKLOAD.sigma})
  --max-ms N        longest simulated run in ms: longer draws are cut to it (default ${MAX_MS_PER_MEDIAN} x --median-ms,
                    at least ${DEFAULT_WORKLOAD.maxMs}); the stack says what it cuts to when it starts
  --seed N          random seed of the workload and run times (default ${DEFAULT_WORKLOAD.seed})
  --kinds LIST      the job kinds in the mix, comma-separated (default every kind: ${DEFAULT_WORKLOAD.kinds.join(',')})
  --glue-share X    share of Glue jobs when Glue is in the mix, 0..1; the other kinds share the rest (default ${DEFAULT_WORKLOAD.glueShare})
  --timeout-s N     give up after N seconds (default: scales with the workload, at least 300)
  --workers N       (also with --serve, --sets) run each function in N worker threads of its own, as Lambda runs
                    invocations apart (default 0: all in the stack's thread)
  --json            print the summary as one JSON object on the last line

Job sets (--sets FILE):
  --day-seconds N   how many real seconds the day lasts (default 20)
  --pool NAME=N     a pool and its limit (repeatable; default 8 for each pool the sets' jobs name)
  --median-ms N     median simulated run time in ms (default 300 with --sets)

Resident stack (--serve):
  --pool NAME=N     a pool and its limit (repeatable; default: --limit for 'default', else serverless.yml's local pools)
  --sqs-port N      SQS emulator port (default ${DEFAULT_PORTS.sqs}; 0: any free port)
  --dynamodb-port N DynamoDB emulator port (default ${DEFAULT_PORTS.dynamodb})
  --jobapi-port N   job API simulator port, every kind (default ${DEFAULT_PORTS.jobApi})
  --exports-file F  where to write the export lines sluice reads (default .sluice/local.env; env SLUICE_LOCAL_ENV_FILE)
  --quiet           no line per start and end
  --check-stage S   warn about each job that stage S, deployed, would refuse (names its patterns do not allow, pools
                    and keyed limits it lacks; default dev, with shared/config/stages/dev.yml if you wrote one; none: off)

Everything listens on 127.0.0.1 only.`;

export interface StartOptions {
  help: boolean;
  serve: boolean;
  /** the sample workload; in serve mode jobs is 0 unless --jobs was given */
  workload: WorkloadOptions;
  limit: number;
  /** undefined: defaultTimeoutMs(...) */
  timeoutMs?: number;
  json: boolean;
  quiet: boolean;
  /** --serve: the pools asked for (--pool, or --limit for `default`); undefined takes serverless.yml's local pools */
  pools?: Record<string, number>;
  ports: { sqs: number; dynamodb: number; jobApi: number };
  envFile?: string;
  /** --serve: the deployed stage whose refusals are warned about (undefined: --check-stage none) */
  checkStage?: string;
  /** Worker threads per function (0: the functions run in the stack's own thread). */
  workers: number;
  /** --sets: the job sets file to run a day of, and how long the day lasts (real ms) */
  sets?: { file: string; dayMs: number };
}

type Kind = 'boolean' | 'string' | 'repeat';
const FLAGS: Record<string, Kind> = {
  help: 'boolean',
  h: 'boolean',
  serve: 'boolean',
  json: 'boolean',
  quiet: 'boolean',
  jobs: 'string',
  limit: 'string',
  'median-ms': 'string',
  'max-ms': 'string',
  sigma: 'string',
  seed: 'string',
  'glue-share': 'string',
  kinds: 'string',
  'timeout-s': 'string',
  pool: 'repeat',
  'sqs-port': 'string',
  'dynamodb-port': 'string',
  'jobapi-port': 'string',
  'exports-file': 'string',
  'check-stage': 'string',
  sets: 'string',
  'day-seconds': 'string',
  workers: 'string',
};

/**
 * `npm start`'s flags. Every mistake is a StartUsageError whose message is one line naming the flag and the value; a
 * value is taken as given (`--jobs -5` is the value -5, not an unknown flag), so the message says what is really wrong.
 */
export function parseStartArgs(argv: readonly string[]): StartOptions {
  const values = new Map<string, string | true>();
  const pools: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const match = /^--?([^=]+)(?:=(.*))?$/s.exec(arg);
    if (!match) throw new StartUsageError(`unexpected argument '${arg}' (flags start with --)`);
    const [, name, inline] = match as unknown as [string, string, string | undefined];
    const kind = FLAGS[name];
    if (!kind || (arg.startsWith('-') && !arg.startsWith('--') && name !== 'h'))
      throw new StartUsageError(`unknown flag '${arg.split('=')[0]}'`);
    if (kind === 'boolean') {
      if (inline !== undefined) throw new StartUsageError(`--${name} takes no value`);
      values.set(name, true);
      continue;
    }
    const value = inline ?? argv[++i];
    if (value === undefined || value === '') throw new StartUsageError(`--${name} needs a value`);
    if (kind === 'repeat') pools.push(value);
    else values.set(name, value);
  }
  const text = (name: string) => values.get(name) as string | undefined;
  const serve = values.has('serve');
  const setsFile = text('sets');
  if (setsFile !== undefined && serve) throw new StartUsageError('--sets runs a day of job sets and exits; it does not go with --serve');
  if (values.has('day-seconds') && setsFile === undefined) throw new StartUsageError('--day-seconds goes with --sets');
  const limit = wholeNumber(text('limit'), 8, 'limit', 0, MAX_POOL_LIMIT);
  const medianMs = wholeNumber(text('median-ms'), setsFile !== undefined ? 300 : DEFAULT_WORKLOAD.medianMs, 'median-ms', 0, 86_400_000);
  // The cut follows the median unless given: a median of a minute gives runs of minutes, not of the default's 12 s.
  const maxMs = wholeNumber(text('max-ms'), defaultMaxMs(medianMs), 'max-ms', 1, 7 * 86_400_000);
  const workload: WorkloadOptions = {
    ...DEFAULT_WORKLOAD,
    jobs: wholeNumber(text('jobs'), serve ? 0 : DEFAULT_WORKLOAD.jobs, 'jobs', serve ? 0 : 1, 100_000),
    medianMs,
    maxMs,
    minMs: Math.min(DEFAULT_WORKLOAD.minMs, maxMs),
    sigma: decimal(text('sigma'), DEFAULT_WORKLOAD.sigma, 'sigma', 0, 5),
    seed: wholeNumber(text('seed'), DEFAULT_WORKLOAD.seed, 'seed', 0, 2 ** 32 - 1),
    glueShare: decimal(text('glue-share'), DEFAULT_WORKLOAD.glueShare, 'glue-share', 0, 1),
    kinds: kindsOf(text('kinds')),
  };
  const timeoutS = text('timeout-s');
  const options: StartOptions = {
    help: values.has('help') || values.has('h'),
    serve,
    workload,
    limit,
    ...(timeoutS !== undefined && { timeoutMs: wholeNumber(timeoutS, 0, 'timeout-s', 1, 7 * 86_400) * 1000 }),
    json: values.has('json'),
    quiet: values.has('quiet'),
    workers: wholeNumber(text('workers'), 0, 'workers', 0, 16),
    ports: {
      sqs: wholeNumber(text('sqs-port'), DEFAULT_PORTS.sqs, 'sqs-port', 0, 65_535),
      dynamodb: wholeNumber(text('dynamodb-port'), DEFAULT_PORTS.dynamodb, 'dynamodb-port', 0, 65_535),
      jobApi: wholeNumber(text('jobapi-port'), DEFAULT_PORTS.jobApi, 'jobapi-port', 0, 65_535),
    },
    ...(text('exports-file') !== undefined && { envFile: text('exports-file') }),
    ...(serve && text('check-stage') !== 'none' && { checkStage: text('check-stage') ?? 'dev' }),
    ...(setsFile !== undefined && {
      sets: { file: setsFile, dayMs: wholeNumber(text('day-seconds'), 20, 'day-seconds', 1, 86_400) * 1000 },
    }),
    ...(pools.length > 0 ? { pools: poolsOf(pools) } : serve && values.has('limit') ? { pools: { default: limit } } : {}),
  };
  if (!serve) {
    for (const flag of setsFile !== undefined
      ? ['sqs-port', 'dynamodb-port', 'jobapi-port', 'exports-file', 'quiet', 'check-stage']
      : ['pool', 'sqs-port', 'dynamodb-port', 'jobapi-port', 'exports-file', 'quiet', 'check-stage'])
      if (values.has(flag) || (flag === 'pool' && pools.length > 0)) throw new StartUsageError(`--${flag} goes with --serve`);
    if (limit === 0 && !options.help)
      throw new StartUsageError('--limit 0 pauses the pool: no job of the sample workload would ever start (use --limit 1 or more)');
  } else if (values.has('json') || values.has('timeout-s')) {
    throw new StartUsageError(`--${values.has('json') ? 'json' : 'timeout-s'} is for the sample workload run, not --serve`);
  }
  return options;
}

/**
 * How long the sample workload may take: three times the time its runs need back to back in `limit` slots (at their
 * mean, a log-normal's median x e^(sigma^2/2), within the workload's bounds), plus a minute to start; at least 300 s.
 */
export function defaultTimeoutMs(workload: WorkloadOptions, limit: number): number {
  const meanMs = Math.min(workload.maxMs, Math.max(workload.minMs, workload.medianMs * Math.exp((workload.sigma * workload.sigma) / 2)));
  const rounds = Math.ceil(workload.jobs / Math.max(1, limit));
  return Math.max(300_000, 60_000 + 3 * rounds * meanMs);
}

const PoolName = base.pool.unwrap();

/** `--kinds appflow,sfn`: registered kinds, each once; undefined gives every kind. */
function kindsOf(value: string | undefined): JobKind[] {
  if (value === undefined) return [...DEFAULT_WORKLOAD.kinds];
  const kinds = value.split(',').map((k) => k.trim());
  const unknown = kinds.filter((k) => !isJobKind(k));
  if (unknown.length > 0 || kinds.length === 0)
    throw new StartUsageError(`--kinds: unknown kind '${unknown[0] ?? ''}' (kinds: ${KINDS.map((k) => k.kind).join(', ')})`);
  if (new Set(kinds).size !== kinds.length) throw new StartUsageError(`--kinds names a kind twice: '${value}'`);
  return kinds as JobKind[];
}

function poolsOf(entries: string[]): Record<string, number> {
  const pools: Record<string, number> = {};
  for (const entry of entries) {
    const match = /^([^=]+)=(.*)$/.exec(entry);
    if (!match) throw new StartUsageError(`--pool takes NAME=LIMIT, got '${entry}'`);
    const [, name, limit] = match as unknown as [string, string, string];
    if (!PoolName.safeParse(name).success)
      throw new StartUsageError(`--pool: bad pool name '${name}' (letters, digits, '.', '_', ':', '-')`);
    pools[name] = wholeNumber(limit, 0, `pool ${name}`, 0, MAX_POOL_LIMIT);
  }
  return pools;
}

function wholeNumber(value: string | undefined, fallback: number, name: string, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw new StartUsageError(`--${name} must be a whole number from ${min} to ${max}, got '${value}'`);
  return n;
}

function decimal(value: string | undefined, fallback: number, name: string, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = /^(\d+(\.\d*)?|\.\d+)$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isFinite(n) || n < min || n > max)
    throw new StartUsageError(`--${name} must be a number from ${min} to ${max}, got '${value}'`);
  return n;
}
