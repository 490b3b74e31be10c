import { readFile } from 'node:fs/promises';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { noMetrics, silentLog } from '../app/deps';
import { PoolAdmin } from '../app/poolAdmin';
import { DynamoJobLedger } from '../adapters/dynamodb/jobLedger';
import { DynamoLeaseStore } from '../adapters/dynamodb/leaseStore';
import { SqsJobQueue } from '../adapters/sqs/jobQueue';
import { systemClock } from '../ports/clock';
import type { JobQueue } from '../ports/jobQueue';
import { type CliOptions, type Command, parseArgs, USAGE, UsageError } from './args';
import { enqueueJobs, parseSpecFile } from './enqueue';
import { formatEnqueueReport, formatPoolTable, formatSetLimit } from './format';
import { resolveTargets, type Targets } from './targets';

/** Exit codes: 0 done, 1 failed (or some specs rejected), 2 the command line is wrong. */
export const ExitCode = { Ok: 0, Failed: 1, Usage: 2 } as const;

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
  /** The contents of a file; `-` is standard input. */
  readInput(file: string): Promise<string>;
}

export interface CliClients {
  sqs: SQSClient;
  doc: DynamoDBDocumentClient;
  close(): void;
}

/**
 * AWS clients from the SDK's standard configuration (credentials, region, AWS_ENDPOINT_URL_*), as the functions make
 * them (shared/adapters/awsClients.ts): SQS calls go to the configured endpoint, not to the host inside a queue URL.
 */
export function sdkClients(region?: string): CliClients {
  const config = region ? { region } : {};
  const sqs = new SQSClient({ ...config, useQueueUrlAsEndpoint: false });
  const dynamodb = new DynamoDBClient(config);
  const doc = DynamoDBDocumentClient.from(dynamodb, { marshallOptions: { removeUndefinedValues: true } });
  return {
    sqs,
    doc,
    close() {
      sqs.destroy();
      dynamodb.destroy();
    },
  };
}

export function processIo(): CliIo {
  return {
    stdout: (text) => void process.stdout.write(`${text}\n`),
    stderr: (text) => void process.stderr.write(`${text}\n`),
    env: process.env,
    readInput: (file) => (file === '-' ? readStdin() : readFile(file, 'utf8')),
  };
}

/** Runs one command line; returns the exit code. Writes only through `io`. */
export async function main(
  argv: readonly string[],
  io: CliIo = processIo(),
  makeClients: (region?: string) => CliClients = sdkClients,
): Promise<number> {
  let command: Command;
  let options: CliOptions;
  try {
    ({ command, options } = parseArgs(argv));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr(`sluice: ${error.message}\nRun 'sluice --help' for the commands.`);
    return ExitCode.Usage;
  }
  if (command.name === 'help') {
    io.stdout(USAGE);
    return ExitCode.Ok;
  }
  let clients: CliClients | undefined;
  try {
    // Read the input before any AWS call: a missing or malformed file costs nothing.
    const specs = command.name === 'enqueue' ? parseSpecFile(await io.readInput(command.file)) : [];
    if (command.name === 'enqueue' && specs.length === 0) {
      io.stdout(options.json ? JSON.stringify({ sent: [], rejected: [] }) : `no job specs in ${command.file}: nothing sent`);
      return ExitCode.Ok;
    }
    clients = makeClients(options.region);
    const { sqs, doc } = clients;
    const lookupQueueUrl = async (QueueName: string) => {
      const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName }));
      if (!QueueUrl) throw new Error(`SQS returned no URL for queue ${QueueName}`);
      return QueueUrl;
    };
    const targets = (need: ReadonlyArray<keyof Targets>) => resolveTargets(options, io.env, need, lookupQueueUrl);

    switch (command.name) {
      case 'enqueue': {
        const { queueUrl } = await targets(['queueUrl']);
        const report = await enqueueJobs(sqs, queueUrl!, specs);
        if (options.json) io.stdout(JSON.stringify({ queueUrl, ...report }, null, 2));
        else {
          const out = formatEnqueueReport(report, queueUrl!);
          io.stdout(out.stdout);
          if (out.stderr) io.stderr(out.stderr);
        }
        return report.rejected.length > 0 ? ExitCode.Failed : ExitCode.Ok;
      }
      case 'pool-list': {
        const { table } = await targets(['table']);
        const pools = await poolAdmin(doc, table!, UNUSED_QUEUE).list();
        io.stdout(options.json ? JSON.stringify(pools, null, 2) : formatPoolTable(pools));
        return ExitCode.Ok;
      }
      case 'pool-set-limit': {
        const { table, queueUrl, dlqUrl } = await targets(['table', 'queueUrl']);
        // Raising a limit sends the waiting jobs it lets in to the job queue; nothing here dead-letters.
        const admin = poolAdmin(doc, table!, new SqsJobQueue(sqs, queueUrl!, dlqUrl ?? ''));
        const { admitted } = await admin.setLimit(command.pool, command.limit);
        io.stdout(
          options.json
            ? JSON.stringify({ pool: command.pool, limit: command.limit, admitted })
            : formatSetLimit(command.pool, command.limit, admitted),
        );
        return ExitCode.Ok;
      }
      default:
        return unreachable(command);
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`sluice: ${error.message}`);
      return ExitCode.Usage;
    }
    io.stderr(`sluice: ${describeError(error)}`);
    return ExitCode.Failed;
  } finally {
    clients?.close();
  }
}

/** Entry point of bin/sluice.cjs. */
export function run(): void {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`sluice: ${describeError(error)}\n`);
      process.exitCode = ExitCode.Failed;
    },
  );
}

function poolAdmin(doc: DynamoDBDocumentClient, table: string, queue: JobQueue): PoolAdmin {
  return new PoolAdmin({
    leases: new DynamoLeaseStore(doc, table),
    ledger: new DynamoJobLedger(doc, table),
    queue,
    clock: systemClock,
    log: silentLog,
    metrics: noMetrics,
  });
}

function unreachable(command: never): never {
  throw new Error(`unhandled command ${JSON.stringify(command)}`);
}

/** `pool list` only reads; a queue it could never need is not looked up. */
const UNUSED_QUEUE: JobQueue = {
  send: () => Promise.reject(new Error('pool list sends nothing')),
  deadLetter: () => Promise.reject(new Error('pool list sends nothing')),
};

/** One line a person can act on: the SDK's error name (ResourceNotFoundException, ...) and message. */
export function describeError(error: unknown): string {
  const e = error as { name?: string; message?: string } | null;
  const name = e?.name && e.name !== 'Error' ? `${e.name}: ` : '';
  const message = e?.message ?? String(error);
  const hint =
    e?.name === 'ResourceNotFoundException'
      ? ' (is the table name or stage right, and the region?)'
      : e?.name === 'QueueDoesNotExist' || e?.name === 'AWS.SimpleQueueService.NonExistentQueue'
        ? ' (is the stage right, and the region?)'
        : '';
  return `${name}${message}${hint}`;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}
