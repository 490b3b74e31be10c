import { parseArgs as parseNodeArgs } from 'node:util';
import { base } from '../domain/job';
import { keyGate } from '../domain/limits';
import { parseRate } from '../domain/rate';
import { JobState } from '../domain/jobState';
import { isValidLimit, MAX_POOL_LIMIT } from '../domain/pool';
import { MAX_REASON_LENGTH } from '../kinds/callback/reports';
import { isRunId, jobIdInToken } from '../kinds/callback/token';

/** Where `sluice dashboard` listens by default (127.0.0.1 only). */
export const DEFAULT_DASHBOARD_PORT = 8470;

/** What the user asked for. */
export type Command =
  | { name: 'help' }
  | { name: 'schema' }
  | { name: 'check'; file: string }
  | { name: 'enqueue'; file: string; at?: string }
  | { name: 'cancel'; id: string; stop: boolean }
  | { name: 'pool-list' }
  | { name: 'pool-set-limit'; pool: string; limit: number; create: boolean }
  | { name: 'pool-set-rate'; pool: string; startsPerSecond?: number }
  | { name: 'jobs-show'; id: string }
  | { name: 'jobs-list'; pool?: string; state?: JobState; max: number }
  | { name: 'dlq-list' }
  | { name: 'dlq-redrive'; ids?: string[] }
  | { name: 'top'; once: boolean; intervalMs: number }
  | { name: 'dashboard'; port: number }
  | { name: 'complete'; token: string; failed?: string }
  | { name: 'heartbeat'; token: string }
  | { name: 'sets-list'; file?: string }
  | { name: 'sets-runs'; set: string; max: number }
  | { name: 'sets-failed'; set: string; run: string }
  | { name: 'sets-run-now'; set: string; id?: string; file?: string }
  | { name: 'sets-pause'; set: string; paused: boolean };

/** Where Sluice lives and how to answer; each may also come from the environment (see targets.ts). */
export interface CliOptions {
  table?: string;
  queueUrl?: string;
  dlqUrl?: string;
  callbackQueueUrl?: string;
  stage?: string;
  region?: string;
  json: boolean;
}

export interface ParsedArgs {
  command: Command;
  options: CliOptions;
}

/** The command line is wrong: the message says how, and the command exits with 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const USAGE = `Usage: sluice <command> [options]

Commands:
  enqueue FILE               send the job specs in FILE (a JSON spec, a JSON array, or JSONL; - reads stdin)
        [--at TIME]          to the job queue, 10 per request; specs without an id get one; --at: every job starts
                             at TIME, not before (ISO 8601 with an offset or Z: its notBefore; in the past: at once);
                             ids the table knows already are named (each id runs once)
  schema                     print the JSON Schema of a job message (for producers in other languages)
  check FILE [--stage S]     what stage S (default dev) would refuse of the jobs in FILE (job specs as for enqueue, or
                             a job sets .yml): names its patterns do not allow, pools and keyed limits it lacks
  cancel ID [--stop]         a scheduled, queued or waiting job never starts (it holds no slot); a running one is
                             stopped through its job API only with --stop (its run's end then ends it)
  pool list                  show each pool: limit, slots in use, free, waiting jobs, and each holder with its age
  pool set-limit POOL N      set POOL's limit to N (0..${MAX_POOL_LIMIT}) now; raising it lets waiting jobs in at once,
        [--create]           lowering it stops new starts and never touches running jobs; --create makes a new pool
  jobs show ID               one job's record: state, attempts, run id, notBefore, times, last error
  jobs list [--pool P]       the latest changed jobs (--max N, default 50), by pool and state, with what each runs
        [--state S]          (S: ${Object.values(JobState).join(', ')}); reads the whole table (a Scan)
  dlq list                   the dead-letter queue: each message's job id, name, age and whole reason (nothing taken)
  dlq redrive --id ID        send dead-lettered jobs again with their original bodies, after their cause is fixed
        [--id ID2 | --all]   (--id repeats; --all: every message that is a JSON object)
  top [--once]               live view in the terminal: pools, holders and ages, next waiters, recent jobs, the DLQ
  dashboard [--port N]       the same as a web page on http://127.0.0.1:N (default ${DEFAULT_DASHBOARD_PORT}), with limit changes and
                             redrives behind a confirmation; reads with your own credentials, serves 127.0.0.1 only
  pool set-rate POOL RATE    at most RATE starts of POOL's jobs (2/s, 30/m, 100/h; off removes it); jobs over it
                             wait, costing nothing, and start as it allows
  limit set-rate KEY RATE    the same for a keyed limit
  limit set KEY N            set the keyed limit KEY's maximum (as jobs name it in "limits", e.g. org:acme), the
                             same way (created if new)
  complete TOKEN             report a callback job's run as succeeded (the token its start message carried)
        [--failed REASON]    ... or as failed, with why; sent to the callback queue, checked by Sluice
  heartbeat TOKEN            report a callback job's run alive (its heartbeat deadline starts again)
  sets list [--file F]       the job sets of the sets file (F, env SLUICE_JOB_SETS_FILE, or shared/config/jobSets.yml):
                             schedule, jobs, paused or not, last run
  sets runs NAME [--max N]   a set's runs, newest first: jobs ended of all, completed, succeeded and failed
  sets failed NAME RUN       every failed job of a run (its completion event names the first 100), from their records
  sets run-now NAME          run the set now, as its schedule would (idempotent per --id ID: the same id is one run)
        [--id ID] [--file F]
  sets pause NAME            its schedule's fires are skipped until \`sets resume NAME\` (run-now still runs it)

Options:
  --table NAME               the Sluice table            (env SLUICE_TABLE)
  --queue-url URL            the job queue               (env SLUICE_QUEUE_URL)
  --dlq-url URL              the dead-letter queue       (env SLUICE_DLQ_URL)
  --callback-queue-url URL   the callback queue          (env SLUICE_CALLBACK_QUEUE_URL)
  --stage STAGE              find all three by the names a deployed stage has (sluice-STAGE, sluice-STAGE-jobs, ...)
                             (env SLUICE_STAGE); --stage local: the resident local stack (npm start -- --serve)
  --region REGION            AWS region (otherwise the SDK's: AWS_REGION, the profile)
  --json                     print JSON instead of text
  -h, --help                 this help

AWS credentials, region and endpoints come from the standard SDK configuration (AWS_PROFILE, AWS_REGION,
AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL_DYNAMODB, ...), so the same command works against AWS and the local emulators.
With no table, queue or stage given, sluice uses the resident local stack if one runs (npm start -- --serve writes
its settings to .sluice/local.env, or SLUICE_LOCAL_ENV_FILE).`;

const OPTIONS = {
  table: { type: 'string' },
  'queue-url': { type: 'string' },
  'dlq-url': { type: 'string' },
  'callback-queue-url': { type: 'string' },
  failed: { type: 'string' },
  stage: { type: 'string' },
  region: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  create: { type: 'boolean', default: false },
  pool: { type: 'string' },
  state: { type: 'string' },
  max: { type: 'string' },
  id: { type: 'string', multiple: true },
  all: { type: 'boolean', default: false },
  once: { type: 'boolean', default: false },
  'interval-s': { type: 'string' },
  at: { type: 'string' },
  stop: { type: 'boolean', default: false },
  port: { type: 'string' },
  file: { type: 'string' },
} as const;

type Values = ReturnType<typeof parseNodeArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true; strict: true }>>['values'];

/** `--at` follows the same rule as the `notBefore` of a job spec. */
const NotBefore = base.notBefore.unwrap();

function notBeforeOf(value: string): string {
  const parsed = NotBefore.safeParse(value);
  if (!parsed.success) throw new UsageError(`--at '${value}': ${parsed.error.issues[0]!.message}`);
  return parsed.data;
}

/** Pool names follow the same rule as the `pool` of a job spec. */
const PoolName = base.pool.unwrap();

/** Turns argv (without node and the script) into a command, or throws UsageError. Reads nothing else. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  // The option parser reads `-5` or `-1.jsonl` as short options: they are values (a limit, a file name), so they are
  // hidden from it and put back after.
  const dashed: string[] = [];
  const hide = (arg: string) => (/^-\d/.test(arg) ? `\u0000${dashed.push(arg) - 1}` : arg);
  const unhide = (arg: string) => (/^\u0000\d+$/.test(arg) ? dashed[Number(arg.slice(1))]! : arg);
  let parsed;
  try {
    parsed = parseNodeArgs({ args: argv.map(hide), options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const positionals = parsed.positionals.map(unhide);
  const values = Object.fromEntries(
    Object.entries(parsed.values).map(([k, v]) => [k, typeof v === 'string' ? unhide(v) : Array.isArray(v) ? v.map(unhide) : v]),
  ) as Values;
  const options: CliOptions = {
    table: nonEmpty(values.table, '--table'),
    queueUrl: nonEmpty(values['queue-url'], '--queue-url'),
    dlqUrl: nonEmpty(values['dlq-url'], '--dlq-url'),
    callbackQueueUrl: nonEmpty(values['callback-queue-url'], '--callback-queue-url'),
    stage: nonEmpty(values.stage, '--stage'),
    region: nonEmpty(values.region, '--region'),
    json: values.json ?? false,
  };
  if (values.help || positionals.length === 0 || positionals[0] === 'help') return { command: { name: 'help' }, options };
  return { command: commandOf(positionals, values), options };
}

function commandOf(positionals: string[], values: Values): Command {
  const [name, ...rest] = positionals;
  switch (name) {
    case 'schema':
      expectCount(rest, 0, 'schema');
      return { name: 'schema' };
    case 'check':
      expectCount(rest, 1, 'check FILE [--stage STAGE]');
      return { name: 'check', file: rest[0]! };
    case 'enqueue': {
      expectCount(rest, 1, 'enqueue FILE [--at TIME]');
      return { name: 'enqueue', file: rest[0]!, ...(values.at !== undefined && { at: notBeforeOf(values.at) }) };
    }
    case 'cancel': {
      expectCount(rest, 1, 'cancel ID [--stop]');
      return { name: 'cancel', id: rest[0]!, stop: values.stop ?? false };
    }
    case 'pool': {
      const [sub, ...args] = rest;
      if (sub === 'list') {
        expectCount(args, 0, 'pool list');
        return { name: 'pool-list' };
      }
      if (sub === 'set-limit') {
        expectCount(args, 2, 'pool set-limit POOL N');
        return { name: 'pool-set-limit', pool: poolName(args[0]!), limit: limitOf(args[1]!), create: values.create ?? false };
      }
      if (sub === 'set-rate') {
        expectCount(args, 2, 'pool set-rate POOL RATE');
        return { name: 'pool-set-rate', pool: poolName(args[0]!), ...rateOf(args[1]!) };
      }
      throw new UsageError(
        sub === undefined
          ? "'pool' needs a subcommand: list, set-limit or set-rate"
          : `unknown pool subcommand '${sub}': use list, set-limit or set-rate`,
      );
    }
    case 'limit': {
      const [sub, ...args] = rest;
      if (sub === 'set-rate') {
        expectCount(args, 2, 'limit set-rate KEY RATE');
        return { name: 'pool-set-rate', pool: keyGate(limitKey(args[0]!)), ...rateOf(args[1]!) };
      }
      if (sub !== 'set')
        throw new UsageError(
          sub === undefined ? "'limit' needs a subcommand: set or set-rate" : `unknown limit subcommand '${sub}': use set or set-rate`,
        );
      expectCount(args, 2, 'limit set KEY N');
      // A keyed limit is the gate key/KEY: pool admin handles it as it handles a pool.
      return { name: 'pool-set-limit', pool: keyGate(limitKey(args[0]!)), limit: limitOf(args[1]!), create: true };
    }
    case 'jobs': {
      const [sub, ...args] = rest;
      if (sub === 'show') {
        expectCount(args, 1, 'jobs show ID');
        return { name: 'jobs-show', id: args[0]! };
      }
      if (sub === 'list') {
        expectCount(args, 0, 'jobs list [--pool P] [--state S] [--max N]');
        return {
          name: 'jobs-list',
          ...(values.pool !== undefined && { pool: poolName(values.pool) }),
          ...(values.state !== undefined && { state: stateOf(values.state) }),
          max: wholeNumber(values.max, 50, '--max', 1, 100_000),
        };
      }
      throw new UsageError(
        sub === undefined ? "'jobs' needs a subcommand: show or list" : `unknown jobs subcommand '${sub}': use show or list`,
      );
    }
    case 'dlq': {
      const [sub, ...args] = rest;
      if (sub === 'list') {
        expectCount(args, 0, 'dlq list');
        return { name: 'dlq-list' };
      }
      if (sub === 'redrive') {
        expectCount(args, 0, 'dlq redrive --id ID | --all');
        const ids = values.id ?? [];
        if (values.all === ids.length > 0) throw new UsageError('dlq redrive needs --id ID (one or more) or --all, not both');
        return { name: 'dlq-redrive', ...(ids.length > 0 && { ids }) };
      }
      throw new UsageError(
        sub === undefined ? "'dlq' needs a subcommand: list or redrive" : `unknown dlq subcommand '${sub}': use list or redrive`,
      );
    }
    case 'top':
      expectCount(rest, 0, 'top [--once] [--interval-s N]');
      return { name: 'top', once: values.once ?? false, intervalMs: wholeNumber(values['interval-s'], 2, '--interval-s', 1, 3600) * 1000 };
    case 'complete': {
      expectCount(rest, 1, 'complete TOKEN [--failed REASON]');
      const failed = values.failed;
      if (failed !== undefined && (failed.trim() === '' || failed.length > MAX_REASON_LENGTH))
        throw new UsageError(`--failed needs a reason of 1 to ${MAX_REASON_LENGTH} characters`);
      return { name: 'complete', token: tokenOf(rest[0]!), ...(failed !== undefined && { failed }) };
    }
    case 'heartbeat':
      expectCount(rest, 1, 'heartbeat TOKEN');
      return { name: 'heartbeat', token: tokenOf(rest[0]!) };
    case 'sets': {
      const [sub, ...args] = rest;
      const file = nonEmpty(values.file, '--file');
      if (sub === 'list') {
        expectCount(args, 0, 'sets list [--file F]');
        return { name: 'sets-list', ...(file !== undefined && { file }) };
      }
      if (sub === 'runs') {
        expectCount(args, 1, 'sets runs NAME [--max N]');
        return { name: 'sets-runs', set: args[0]!, max: wholeNumber(values.max, 20, '--max', 1, 1000) };
      }
      if (sub === 'failed') {
        expectCount(args, 2, 'sets failed NAME RUN');
        return { name: 'sets-failed', set: args[0]!, run: args[1]! };
      }
      if (sub === 'run-now') {
        expectCount(args, 1, 'sets run-now NAME [--id ID] [--file F]');
        const ids = values.id ?? [];
        if (ids.length > 1) throw new UsageError('sets run-now takes one --id');
        return { name: 'sets-run-now', set: args[0]!, ...(ids[0] !== undefined && { id: ids[0] }), ...(file !== undefined && { file }) };
      }
      if (sub === 'pause' || sub === 'resume') {
        expectCount(args, 1, `sets ${sub} NAME`);
        return { name: 'sets-pause', set: args[0]!, paused: sub === 'pause' };
      }
      throw new UsageError(
        sub === undefined
          ? "'sets' needs a subcommand: list, runs, failed, run-now, pause or resume"
          : `unknown sets subcommand '${sub}': use list, runs, failed, run-now, pause or resume`,
      );
    }
    case 'dashboard':
      expectCount(rest, 0, 'dashboard [--port N]');
      return { name: 'dashboard', port: wholeNumber(values.port, DEFAULT_DASHBOARD_PORT, '--port', 0, 65_535) };
    default:
      throw new UsageError(`unknown command '${name}'`);
  }
}

/**
 * A callback token as its start message carried it (cb2.<mac>.<run>.<expiry>.<job id>); whether Sluice made it is
 * checked by Sluice. A run id (what `sluice jobs` shows) is not one, and is refused saying so.
 */
function tokenOf(value: string): string {
  if (isRunId(value))
    throw new UsageError(
      `'${value}' is a run id (as sluice jobs shows it), not a token: report with the token the run's start message carried`,
    );
  if (jobIdInToken(value) === undefined)
    throw new UsageError(`'${value.slice(0, 40)}' is not a callback token (cb2.<43 characters>.<run>.<expiry>.<job id>)`);
  return value;
}

function wholeNumber(value: string | undefined, fallback: number, flag: string, min: number, max: number): number {
  if (value === undefined) return fallback;
  const n = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max)
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max}, got '${value}'`);
  return n;
}

function stateOf(value: string): JobState {
  const states = Object.values(JobState) as string[];
  if (!states.includes(value)) throw new UsageError(`unknown state '${value}': use one of ${states.join(', ')}`);
  return value as JobState;
}

function expectCount(args: string[], count: number, usage: string): void {
  if (args.length !== count)
    throw new UsageError(`usage: sluice ${usage} (got ${args.length === 0 ? 'no arguments' : args.map((a) => `'${a}'`).join(' ')})`);
}

function poolName(value: string): string {
  const parsed = PoolName.safeParse(value);
  if (!parsed.success) throw new UsageError(`bad pool name '${value}': ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

function rateOf(value: string): { startsPerSecond?: number } {
  if (value === 'off') return {};
  const startsPerSecond = parseRate(value);
  if (startsPerSecond === undefined) throw new UsageError(`the rate must look like 2/s, 30/m or 100/h (or off), got '${value}'`);
  return { startsPerSecond };
}

function limitKey(value: string): string {
  const parsed = PoolName.safeParse(value);
  if (!parsed.success) throw new UsageError(`bad limit key '${value}': ${parsed.error.issues[0]?.message ?? 'invalid'}`);
  return parsed.data;
}

function limitOf(value: string): number {
  const limit = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!isValidLimit(limit)) throw new UsageError(`the limit must be a whole number from 0 to ${MAX_POOL_LIMIT}, got '${value}'`);
  return limit;
}

function nonEmpty(value: string | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  if (value.trim() === '') throw new UsageError(`${flag} needs a value`);
  return value;
}
