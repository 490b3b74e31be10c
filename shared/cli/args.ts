import { parseArgs as parseNodeArgs } from 'node:util';
import { AppFlowJobSchema } from '../domain/job';
import { keyGate } from '../domain/limits';
import { isValidLimit, MAX_POOL_LIMIT } from '../domain/pool';

/** What the user asked for. */
export type Command =
  { name: 'help' } | { name: 'enqueue'; file: string } | { name: 'pool-list' } | { name: 'pool-set-limit'; pool: string; limit: number };

/** Where Sluice lives and how to answer; each may also come from the environment (see targets.ts). */
export interface CliOptions {
  table?: string;
  queueUrl?: string;
  dlqUrl?: string;
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
                             to the job queue, 10 per request; specs without an id get one
  pool list                  show each pool and keyed limit (key/KEY): limit, units in use, free, waiting jobs
  pool set-limit POOL N      set POOL's limit to N (0..${MAX_POOL_LIMIT}) now; raising it lets waiting jobs in at once,
                             lowering it stops new starts and never touches running jobs
  limit set KEY N            set the keyed limit KEY's maximum (as a job names it in "limits", e.g. org:acme), the
                             same way

Options:
  --table NAME               the Sluice table            (env SLUICE_TABLE)
  --queue-url URL            the job queue               (env SLUICE_QUEUE_URL)
  --dlq-url URL              the dead-letter queue       (env SLUICE_DLQ_URL)
  --stage STAGE              find all three by the names a deployed stage has (sluice-STAGE, sluice-STAGE-jobs, ...)
                             (env SLUICE_STAGE)
  --region REGION            AWS region (otherwise the SDK's: AWS_REGION, the profile)
  --json                     print JSON instead of text
  -h, --help                 this help

AWS credentials, region and endpoints come from the standard SDK configuration (AWS_PROFILE, AWS_REGION,
AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL_DYNAMODB, ...), so the same command works against AWS and the local emulators.`;

const OPTIONS = {
  table: { type: 'string' },
  'queue-url': { type: 'string' },
  'dlq-url': { type: 'string' },
  stage: { type: 'string' },
  region: { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

/** Pool names follow the same rule as the `pool` of a job spec. */
const PoolName = AppFlowJobSchema.shape.pool.unwrap();

/** Turns argv (without node and the script) into a command, or throws UsageError. Reads nothing else. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
  // A negative number reads as an unknown option to the option parser; say what is really wrong.
  const negative = argv.find((arg) => /^-\d/.test(arg));
  if (negative !== undefined) throw new UsageError(`the limit must be a whole number from 0 to ${MAX_POOL_LIMIT}, got '${negative}'`);
  let parsed;
  try {
    parsed = parseNodeArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const options: CliOptions = {
    table: nonEmpty(values.table, '--table'),
    queueUrl: nonEmpty(values['queue-url'], '--queue-url'),
    dlqUrl: nonEmpty(values['dlq-url'], '--dlq-url'),
    stage: nonEmpty(values.stage, '--stage'),
    region: nonEmpty(values.region, '--region'),
    json: values.json ?? false,
  };
  if (values.help || positionals.length === 0 || positionals[0] === 'help') return { command: { name: 'help' }, options };
  return { command: commandOf(positionals), options };
}

function commandOf(positionals: string[]): Command {
  const [name, ...rest] = positionals;
  switch (name) {
    case 'enqueue': {
      expectCount(rest, 1, 'enqueue FILE');
      return { name: 'enqueue', file: rest[0]! };
    }
    case 'pool': {
      const [sub, ...args] = rest;
      if (sub === 'list') {
        expectCount(args, 0, 'pool list');
        return { name: 'pool-list' };
      }
      if (sub === 'set-limit') {
        expectCount(args, 2, 'pool set-limit POOL N');
        return { name: 'pool-set-limit', pool: poolName(args[0]!), limit: limitOf(args[1]!) };
      }
      throw new UsageError(
        sub === undefined ? "'pool' needs a subcommand: list or set-limit" : `unknown pool subcommand '${sub}': use list or set-limit`,
      );
    }
    case 'limit': {
      const [sub, ...args] = rest;
      if (sub !== 'set') throw new UsageError(sub === undefined ? "'limit' needs a subcommand: set" : `unknown limit subcommand '${sub}': use set`);
      expectCount(args, 2, 'limit set KEY N');
      // A keyed limit is the gate key/KEY: pool admin handles it as it handles a pool.
      return { name: 'pool-set-limit', pool: keyGate(limitKey(args[0]!)), limit: limitOf(args[1]!) };
    }
    default:
      throw new UsageError(`unknown command '${name}'`);
  }
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
