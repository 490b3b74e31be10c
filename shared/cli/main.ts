import { readFile } from 'node:fs/promises';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueUrlCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { noMetrics, silentLog } from '../app/deps';
import { PoolAdmin } from '../app/poolAdmin';
import { CancelJob, CancelOutcome, type CancelResult } from '../app/cancelJob';
import { DynamoScheduleStore } from '../adapters/dynamodb/scheduleStore';
import { kindStarters } from '../kinds/starters';
import '../kinds/starterLoaders'; // `sluice cancel` stops runs of any kind
import { DynamoJobLedger } from '../adapters/dynamodb/jobLedger';
import { DynamoLeaseStore } from '../adapters/dynamodb/leaseStore';
import { SqsJobQueue } from '../adapters/sqs/jobQueue';
import { systemClock } from '../ports/clock';
import type { JobQueue } from '../ports/jobQueue';
import { type CliOptions, type Command, parseArgs, USAGE, UsageError } from './args';
import { InputFileError, SluiceError } from '../errors';
import { peekDeadLetters } from '../inspect/deadLetters';
import { type KnownJob, knownJobs, listJobs } from '../inspect/jobs';
import { poolDetails } from '../inspect/pools';
import { redriveDeadLetters } from '../inspect/redrive';
import { enqueueJobs, parseSpecFile } from './enqueue';
import { formatEnqueueReport, formatSetLimit } from './format';
import { formatDeadLetters, formatJob, formatJobList, formatPoolDetails, formatRedrive } from './formatInspect';
import { useLocalStack } from './localTarget';
import { runTop } from './top';
import { runSetsCommand } from './sets';
import { runDashboard } from '../dashboard/server';
import { resolveTargets, stageResourceNames, type Targets } from './targets';
import { type CallbackReport, reportMessage, ReportType } from '../kinds/callback/reports';
import { expiryInToken, jobIdInToken } from '../kinds/callback/token';
import { jobMessageJsonSchema } from '../kinds/jobMessageSchema';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { EventBridgePublisher } from '../adapters/eventbridge/eventPublisher';
import { announceJobEnd } from '../app/jobSetEnds';
import { checkFile, formatCheck } from './check';
import { terminalJson, terminalSafe } from './terminalText';
import type { OverridePolicy } from '../domain/overridePolicy';
import { parseOverrides } from '../config/settings';
import { loadServiceDefinition } from '../config/serviceDefinition';

/** Exit codes: 0 done, 1 failed (or some specs rejected), 2 the command line is wrong. */
export const ExitCode = { Ok: 0, Failed: 1, Usage: 2 } as const;

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  env: NodeJS.ProcessEnv;
  /** The contents of a file; `-` is standard input. */
  readInput(file: string): Promise<string>;
  /** epoch ms (default: the system clock) */
  now?: () => number;
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

/** The process's own streams; what is printed is made inert first (text from data may hold escape sequences). */
export function processIo(): CliIo {
  return {
    stdout: (text) => void process.stdout.write(`${terminalSafe(text)}\n`),
    stderr: (text) => void process.stderr.write(`${terminalSafe(text)}\n`),
    env: process.env,
    readInput: (file) => (file === '-' ? readStdin() : readFile(file, 'utf8')),
  };
}

/** A file that cannot be read, named with why (readFile's EISDIR and EACCES messages leave the path out). */
async function readSpecs(io: CliIo, file: string): Promise<string> {
  try {
    return await io.readInput(file);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'it is a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : (error as Error).message;
    throw new InputFileError(`cannot read ${file}: ${why}${code && !why.includes(code) ? ` (${code})` : ''}`, { cause: error });
  }
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
  if (command.name === 'schema') {
    io.stdout(terminalJson(jobMessageJsonSchema(), 2));
    return ExitCode.Ok;
  }
  if (command.name === 'check') {
    try {
      const stage = options.stage ?? io.env.SLUICE_STAGE?.trim() ?? 'dev';
      const report = await checkFile(command.file, await readSpecs(io, command.file), stage);
      io.stdout(options.json ? terminalJson(report, 2) : formatCheck(report));
      return report.refused.length > 0 ? ExitCode.Failed : ExitCode.Ok;
    } catch (error) {
      io.stderr(`sluice: ${(error as Error).message}`);
      return ExitCode.Failed;
    }
  }
  let clients: CliClients | undefined;
  try {
    // Read the input before any AWS call: a missing or malformed file costs nothing.
    const specs = command.name === 'enqueue' ? parseSpecFile(await readSpecs(io, command.file)) : [];
    if (command.name === 'enqueue' && specs.length === 0) {
      io.stdout(options.json ? terminalJson({ sent: [], rejected: [] }) : `no job specs in ${command.file}: nothing sent`);
      return ExitCode.Ok;
    }
    const stage = (await useLocalStack(options, io.env)) ? 'local' : (options.stage ?? (io.env.SLUICE_STAGE?.trim() || undefined));
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
        const { queueUrl, table } = await targets(['queueUrl']);
        // The table, when it is known (a flag, SLUICE_TABLE, the stage or the local stack): which ids it knows already.
        const ledgerTable = table ?? (stage && stage !== 'local' ? stageResourceNames(stage).table : undefined);
        const report = await enqueueJobs(sqs, queueUrl!, specs, {
          notBefore: command.at,
          overrides: await stageOverrides(stage, io),
          ...(ledgerTable && { known: (ids: string[]) => knownOrWarn(doc, ledgerTable, ids, io) }),
        });
        if (options.json) io.stdout(terminalJson({ queueUrl, ...report }, 2));
        else {
          const out = formatEnqueueReport(report, queueUrl!);
          io.stdout(out.stdout);
          if (out.stderr) io.stderr(out.stderr);
        }
        return report.rejected.length > 0 ? ExitCode.Failed : ExitCode.Ok;
      }
      case 'pool-list': {
        const { table } = await targets(['table']);
        const now = Date.now();
        // Each holder's record too: its state, run and what it runs (one read per holder).
        const pools = await poolDetails(
          { leases: new DynamoLeaseStore(doc, table!), ledger: new DynamoJobLedger(doc, table!) },
          { records: true },
        );
        io.stdout(
          options.json
            ? terminalJson(
                pools.map(({ next: _next, held, ...pool }) => ({
                  ...pool,
                  holders: held.map((h) => h.jobId),
                  held: held.map((h) => ({ ...h, ageMs: now - h.since })),
                })),
                2,
              )
            : formatPoolDetails(pools, now),
        );
        return ExitCode.Ok;
      }
      case 'pool-set-limit': {
        const { table, queueUrl, dlqUrl } = await targets(['table', 'queueUrl']);
        if (!command.create && !(await new DynamoLeaseStore(doc, table!).getPool(command.pool))) {
          const known = await new DynamoLeaseStore(doc, table!).listPools();
          throw new UsageError(
            `no pool '${command.pool}' in ${table} (${known.length ? `pools: ${known.join(', ')}` : 'no pools yet'}): add --create to make it`,
          );
        }
        // Raising a limit sends the waiting jobs it lets in to the job queue; nothing here dead-letters.
        const admin = poolAdmin(doc, table!, new SqsJobQueue(sqs, queueUrl!, dlqUrl ?? ''));
        const { admitted } = await admin.setLimit(command.pool, command.limit);
        io.stdout(
          options.json
            ? terminalJson({ pool: command.pool, limit: command.limit, admitted })
            : formatSetLimit(command.pool, command.limit, admitted),
        );
        return ExitCode.Ok;
      }
      case 'pool-set-rate': {
        const { table, queueUrl, dlqUrl } = await targets(['table', 'queueUrl']);
        if (!(await new DynamoLeaseStore(doc, table!).getPool(command.pool)))
          throw new UsageError(`no pool or limit '${command.pool}' in ${table}: set its limit first`);
        const admin = poolAdmin(doc, table!, new SqsJobQueue(sqs, queueUrl!, dlqUrl ?? ''));
        const { admitted } = await admin.setRate(command.pool, command.startsPerSecond);
        const rate = command.startsPerSecond === undefined ? 'none' : `${command.startsPerSecond} starts/s`;
        io.stdout(
          options.json
            ? terminalJson({ pool: command.pool, startsPerSecond: command.startsPerSecond ?? null, admitted })
            : `${command.pool}: start rate ${rate}${admitted ? `; ${admitted} waiting job(s) let in` : ''}`,
        );
        return ExitCode.Ok;
      }
      case 'jobs-show': {
        const { table } = await targets(['table']);
        const record = await new DynamoJobLedger(doc, table!).get(command.id);
        if (!record) {
          io.stderr(`sluice: no job '${command.id}' in ${table} (finished jobs are kept 30 days)`);
          return ExitCode.Failed;
        }
        io.stdout(options.json ? terminalJson(record, 2) : formatJob(record, Date.now()));
        return ExitCode.Ok;
      }
      case 'cancel': {
        const { table } = await targets(['table']);
        const cancel = new CancelJob({
          ledger: new DynamoJobLedger(doc, table!),
          leases: new DynamoLeaseStore(doc, table!),
          schedule: new DynamoScheduleStore(doc, table!),
          // Stopping a run calls its job API with your credentials (the SDK's endpoints: AWS_ENDPOINT_URL_GLUE, ...).
          starters: kindStarters({ warn: (message) => io.stderr(`sluice: ${message}`) }),
          clock: systemClock,
          random: Math.random,
          // Its end is announced as the functions announce theirs, on the stage's bus, with your credentials.
          onCancelled: (ended) =>
            announceJobEnd(
              {
                events: new EventBridgePublisher(new EventBridgeClient({ region: options.region }), 'default'),
                clock: systemClock,
                metrics: noMetrics,
                log: { ...silentLog, warn: (message, details) => io.stderr(`sluice: ${message}: ${String(details?.error ?? '')}`) },
              },
              ended,
            ),
        });
        const result = await cancel.cancel(command.id, { stop: command.stop });
        io.stdout(options.json ? terminalJson({ jobId: command.id, ...result }) : formatCancel(command.id, result));
        return result.outcome === CancelOutcome.Cancelled || result.outcome === CancelOutcome.StopRequested ? ExitCode.Ok : ExitCode.Failed;
      }
      case 'jobs-list': {
        const { table } = await targets(['table']);
        const jobs = await listJobs(doc, table!, { pool: command.pool, state: command.state, max: command.max });
        io.stdout(options.json ? terminalJson(jobs, 2) : formatJobList(jobs, Date.now()));
        return ExitCode.Ok;
      }
      case 'dlq-list': {
        const { dlqUrl } = await targets(['dlqUrl']);
        const letters = (await peekDeadLetters(sqs, dlqUrl!)).map(({ receiptHandle: _r, ...letter }) => letter);
        io.stdout(options.json ? terminalJson(letters, 2) : formatDeadLetters(letters, Date.now()));
        return ExitCode.Ok;
      }
      case 'dlq-redrive': {
        const { table, queueUrl, dlqUrl } = await targets(['table', 'queueUrl', 'dlqUrl']);
        const results = await redriveDeadLetters(
          { sqs, ledger: new DynamoJobLedger(doc, table!), queueUrl: queueUrl!, dlqUrl: dlqUrl! },
          command.ids,
        );
        io.stdout(options.json ? terminalJson(results, 2) : formatRedrive(results));
        const missing = command.ids?.filter((id) => !results.some((r) => r.jobId === id)) ?? [];
        if (missing.length > 0) io.stderr(`sluice: not in the dead-letter queue: ${missing.join(', ')}`);
        return results.every((r) => r.outcome === 'resent') && missing.length === 0 ? ExitCode.Ok : ExitCode.Failed;
      }
      case 'top': {
        const { table, dlqUrl } = await targets(['table', 'dlqUrl']);
        return runTop({ doc, sqs, table: table!, dlqUrl: dlqUrl! }, io, command);
      }
      case 'sets-list':
      case 'sets-runs':
      case 'sets-failed':
      case 'sets-run-now':
      case 'sets-pause': {
        const { table, queueUrl } = await targets(command.name === 'sets-run-now' ? ['table', 'queueUrl'] : ['table']);
        io.stdout(await runSetsCommand(command, { doc, sqs, table: table!, queueUrl, env: io.env, json: options.json }));
        return ExitCode.Ok;
      }
      case 'complete':
      case 'heartbeat': {
        // Sluice would drop it (and say so only in its logs): refused here, with the reason.
        const expiresAt = expiryInToken(command.token)!;
        if (expiresAt <= (io.now ?? Date.now)())
          throw new UsageError(
            `the token expired at ${new Date(expiresAt).toISOString()}: Sluice refuses it (a token is valid for its run: ` +
              `its job's timeoutSeconds and a day from when the run got its slot)`,
          );
        const { callbackQueueUrl } = await targets(['callbackQueueUrl']);
        const report: CallbackReport =
          command.name === 'heartbeat'
            ? { type: ReportType.Heartbeat, token: command.token }
            : command.failed !== undefined
              ? { type: ReportType.Completed, token: command.token, outcome: 'failed', reason: command.failed }
              : { type: ReportType.Completed, token: command.token, outcome: 'succeeded' };
        const { MessageId } = await sqs.send(new SendMessageCommand({ QueueUrl: callbackQueueUrl!, MessageBody: reportMessage(report) }));
        const jobId = jobIdInToken(command.token)!;
        const what = report.type === ReportType.Heartbeat ? 'heartbeat' : report.outcome;
        io.stdout(
          options.json
            ? JSON.stringify({ jobId, report: what, callbackQueueUrl, messageId: MessageId })
            : `sent: ${what} of job ${jobId} to ${callbackQueueUrl} (Sluice checks the token; \`sluice jobs show ${jobId}\` shows the result)`,
        );
        return ExitCode.Ok;
      }
      case 'dashboard': {
        const { table, queueUrl, dlqUrl } = await targets(['table', 'queueUrl', 'dlqUrl']);
        return runDashboard({ doc, sqs, table: table!, queueUrl: queueUrl!, dlqUrl: dlqUrl! }, io, command.port);
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
      process.stderr.write(`sluice: ${terminalSafe(describeError(error))}\n`);
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

/** One line a person can act on: the SDK's error name (ResourceNotFoundException, ...) and message. */
export function describeError(error: unknown): string {
  // Sluice's own errors say all in their message.
  if (error instanceof SluiceError) return error.message;
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

/**
 * The ids of `ids` the table knows; none, with a warning, when it cannot be read (a queue writer may send jobs without
 * reading the table): the jobs are sent all the same.
 */
async function knownOrWarn(doc: DynamoDBDocumentClient, table: string, ids: string[], io: CliIo): Promise<KnownJob[] | undefined> {
  try {
    return await knownJobs(doc, table, ids);
  } catch (error) {
    io.stderr(`sluice: could not read ${table} to say which ids ran already (${describeError(error)}); sent all the same`);
    return undefined;
  }
}

/** One line on what `sluice cancel` did, and what to do next when it did nothing. */
export function formatCancel(jobId: string, result: CancelResult): string {
  switch (result.outcome) {
    case CancelOutcome.Cancelled:
      return `cancelled: job ${jobId} (was ${result.state}) will never start`;
    case CancelOutcome.StopRequested:
      return `stop requested: run ${result.executionId} of job ${jobId}; its end ends the job (\`sluice jobs show ${jobId}\`)`;
    case CancelOutcome.Running:
      return `not cancelled: job ${jobId} is running (run ${result.executionId}); add --stop to stop the run`;
    case CancelOutcome.Starting:
      return `not cancelled: job ${jobId} is ${result.state} (its start is under way); once it runs, cancel it with --stop`;
    case CancelOutcome.Finished:
      return `not cancelled: job ${jobId} has ended already (${result.state})`;
    case CancelOutcome.NotFound:
      return `not cancelled: no job '${jobId}' (a job is known once the acquirer has received it; finished jobs are kept 30 days)`;
  }
}

/**
 * The override policy of the stage the command sends to, from its settings as deployed (serverless.yml with its
 * shared/config/stages file): `enqueue` refuses what the stage would. Undefined when the stage is not known (only a
 * queue URL given) or its settings cannot be read here: the acquirer still refuses.
 */
async function stageOverrides(stage: string | undefined, io: CliIo): Promise<OverridePolicy | undefined> {
  if (!stage) return undefined;
  try {
    return parseOverrides(String((await loadServiceDefinition(stage)).params?.default?.overrides ?? '{}'));
  } catch (error) {
    io.stderr(
      `sluice: stage ${stage}'s override policy could not be read (${(error as Error).message.split('\n')[0]}); the acquirer still checks each job`,
    );
    return undefined;
  }
}
