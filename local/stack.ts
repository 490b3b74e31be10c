import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Context, EventBridgeEvent, SQSEvent } from 'aws-lambda';
import type { AwsClients } from '../shared/adapters/awsClients';
import type { ReconcileReport } from '../shared/app/reconcile';
import { type EmulatorName, type EmulatorRestart, type Emulators, startEmulators } from './emulators';
import { LocalEventBus, type LocalEventBusOptions } from './bus';
import { provision, functionEnvironment, type ResourceRefs } from './infra/provision';
import { countRequests, RequestCounter } from './infra/requestCounter';
import { rateToMs } from './infra/schedule';
import { loadServiceDefinition, type ServiceDefinition } from './infra/serviceDefinition';
import { parseQueueArn, type PollerErrorSource, type SqsPoller, startSqsPoller } from './poller';
import { type JobApiSimulator, type JobApiSimulatorOptions, startJobApiSimulator } from './simulators';
import { JOB_API_SERVICES } from '../shared/kinds/registry';
import { type FunctionWorkers, startFunctionWorkers } from './workers/functionWorkers';
import type { CallMessage } from './workers/messages';
import { type DynamoFaultLayer, type DynamoFaultOptions, indexLagOf, installDynamoFaults } from './faults/dynamoFaults';
import { currentInvocation, enforcedTimeoutMs, fenceClients, localFunctionName, startLocalLambda, type AsyncInvoker } from './lambda';

export interface LocalStackOptions {
  /** Emulators already running (the tests share one pair); without them, fauxqs and dynalite start in this process. */
  endpoints?: { sqs: string; dynamodb: string };
  /** Appended to queue and table names so stacks sharing emulators do not meet. */
  nameSuffix?: string;
  /** Environment for the functions on top of serverless.yml's (e.g. POOLS), as a stage parameter would set it. */
  env?: Record<string, string>;
  simulator?: Omit<JobApiSimulatorOptions, 'emit'>;
  bus?: LocalEventBusOptions;
  /** Parallel pollers of the job queue (Lambda starts with 5). */
  pollerConcurrency?: number;
  /** Long-poll wait of each poller, seconds. */
  pollWaitSeconds?: number;
  /** Run the scheduled functions on their (compressed) schedule; off leaves them to reconcileNow(). */
  schedules?: boolean;
  /** Overrides serverless.yml's custom.local.timeScale. */
  timeScale?: number;
  onHandlerError?: (functionName: string, error: unknown) => void;
  /** Errors of the SQS poller itself (a failed receive or delete); without it they are printed. */
  onPollerError?: (error: unknown, source: PollerErrorSource) => void;
  /** Restarts emulators this stack did not start (given by `endpoints`), for faults.restartEmulators. */
  emulatorControl?: { restart(which: EmulatorName, options?: EmulatorRestart): Promise<unknown> };
  /**
   * Run the functions in worker threads, as Lambda runs invocations in environments of their own: this many threads for
   * each function with an event source (the acquirer, the releaser, the callbacks), one for each other. Absent or 0:
   * every function runs in this thread (the default; the stack's fault hooks need it).
   */
  functionWorkers?: number;
  /**
   * Told of this thread's AWS clients as soon as they exist, before the pollers make their first call (a tracer added
   * later would miss the long polls already in flight, and the messages they return).
   */
  onClients?: (clients: AwsClients) => void;
  /** With functionWorkers: each AWS call a function made, with its input and output (the bench's tracer reads them). */
  onWorkerCall?: (call: CallMessage) => void;
  /**
   * DynamoDB that fights back (local/faults/dynamoFaults.ts) on the functions' DynamoDB client: writes meeting a
   * transaction in flight refused as DynamoDB refuses them, and the policy's faults (the fault matrix runs with both).
   * Not with functionWorkers (their clients are in their threads).
   */
  dynamoFaults?: DynamoFaultOptions;
}

export interface LocalStack {
  definition: ServiceDefinition;
  refs: ResourceRefs;
  queueUrl: string;
  deadLetterUrl: string;
  /** Where callback jobs' systems report by SQS (`sluice complete`). */
  callbackQueueUrl: string;
  tableName: string;
  sqs: SQSClient;
  dynamodb: DynamoDBClient;
  doc: DynamoDBDocumentClient;
  simulator: JobApiSimulator;
  bus: LocalEventBus;
  /** The acquirer's poller of the job queue. */
  poller: SqsPoller;
  /** Every SQS event source's poller (the job queue's, the callback queue's). */
  pollers: SqsPoller[];
  requests: RequestCounter;
  /** Threads running each function, with functionWorkers (else empty: all in this thread). */
  functionThreads: Record<string, number>;
  faults: LocalFaults;
  /**
   * How far the functions' reads of an index may lag behind the table (ms; options.dynamoFaults' staleIndexReads, else
   * 0): a reconciler pass reads the slots taken up to this long before it began as they were before.
   */
  indexLagMs: number;
  /**
   * Lambda's asynchronous invocations (the bus's rules, the job sets' schedules, the scheduled reconciler), retried and
   * given up as each function's configuration says: their events and attempts, the events given up (with the
   * invocation records sent to on-failure destinations), faults to inject, and configuration changes.
   */
  lambda: AsyncInvoker;
  /** Runs the reconciler once, now (invoked as its schedule invokes it). */
  reconcileNow(): Promise<ReconcileReport>;
  /**
   * A job set's schedule fires for `scheduledTime` (ISO): the jobSets function, invoked asynchronously as EventBridge
   * Scheduler invokes it. Resolves with the value of the attempt that succeeded (Lambda's retries included), or rejects
   * with the last error once Lambda gave the event up.
   */
  fireJobSet(set: string, scheduledTime: string): Promise<unknown>;
  stop(): Promise<void>;
}

/** Faults the local stack itself can inject (the simulators and the bus have their own). */
export interface LocalFaults {
  /** The next n job messages sent with no delay (hand-off wake-ups) are silently lost. */
  loseWakeUps(n: number): void;
  /** The acquirer dies (throws) right after its next n successful slot acquisitions, before starting the run. */
  crashAfterAcquire(n: number): void;
  /** The acquirer dies right after its next n successful start calls, before recording the run. */
  crashAfterStart(n: number): void;
  /**
   * The SQS and/or DynamoDB emulator stops listening for `downMs` and comes back on the same port with its data: the
   * stack's own emulators, or through options.emulatorControl when the emulators were given.
   */
  restartEmulators(which: EmulatorName, options?: EmulatorRestart): Promise<void>;
}

type Handler = (event: unknown, context: Context) => Promise<unknown>;

/**
 * All of Sluice on this machine: SQS and DynamoDB emulators, the job API simulator (every kind), a local event bus routing the
 * simulator's completion events by serverless.yml's patterns, a poller invoking the acquirer like Lambda's SQS event
 * source, and the scheduled reconciler. The functions are the real handlers from functions/, configured through the
 * same environment variables serverless.yml gives them.
 */
export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const definition = await loadServiceDefinition('local');
  let emulators: Emulators | undefined;
  let dynamoFaults: DynamoFaultLayer | undefined;
  let endpoints = options.endpoints;
  if (!endpoints) {
    emulators = await startEmulators();
    endpoints = { sqs: emulators.sqsEndpoint, dynamodb: emulators.dynamodbEndpoint };
  }

  let bus: LocalEventBus | undefined;
  const simulator = await startJobApiSimulator({ ...options.simulator, emit: (event) => void bus?.put(event as never) });

  // The SDK reads these itself (standard configuration): no endpoint is set in code.
  Object.assign(process.env, {
    AWS_REGION: definition.provider.region ?? 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_SQS: endpoints.sqs,
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
    // every kind's job API is the simulator (shared/kinds/<kind>/simulator.ts)
    ...Object.fromEntries(JOB_API_SERVICES.map((service) => [`AWS_ENDPOINT_URL_${service.toUpperCase()}`, simulator.endpoint])),
    POWERTOOLS_METRICS_DISABLED: process.env.POWERTOOLS_METRICS_DISABLED ?? 'true',
    // Node 20 is what this machine has; Lambda runs nodejs22.x. The SDK's notice about it is noise locally.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ?? 'true',
  });

  // Loaded only now, so the clients and the container see the environment above.
  const { awsClients, onJobApiClient } = await import('../shared/adapters/awsClients');
  const clients = awsClients();
  if (options.dynamoFaults) dynamoFaults = installDynamoFaults(clients.dynamodb, options.dynamoFaults);
  options.onClients?.(clients);
  fenceClients(clients, onJobApiClient); // an invocation past its timeout makes no more AWS calls (local/lambda)
  const requests = new RequestCounter();
  countRequests(clients.sqs, 'sqs', requests);
  countRequests(clients.dynamodb, 'dynamodb', requests);
  onJobApiClient((service, client) => countRequests(client, service, requests));

  // Callback tokens' key: a secret the stack generates in Secrets Manager (the simulator's, as every kind's API), read
  // by the functions from there (CALLBACK_TOKEN_SECRET_ARN), rotated as on AWS.
  const secretsManager = new SecretsManagerClient({});
  const refs = await provision(definition, { ...clients, secretsManager }, options.nameSuffix ?? '').finally(() =>
    secretsManager.destroy(),
  );
  const functionNames = Object.keys(definition.functions);
  for (const name of functionNames) Object.assign(process.env, functionEnvironment(definition, name, refs), options.env);
  const faultState = installFaults(clients.sqs, process.env.QUEUE_URL!);
  const { accountId } = parseQueueArn(process.env.QUEUE_ARN ?? Object.values(refs.arn).find((arn) => arn.startsWith('arn:aws:sqs:'))!);
  requests.reset(); // provisioning is not Sluice's work

  const handlerFiles = Object.fromEntries(
    functionNames.map((name) => {
      const [file, exported] = splitHandler(definition.functions[name]!.handler);
      return [name, { file, exported }];
    }),
  );
  const handlers: Record<string, Handler> = {};
  let workers: FunctionWorkers | undefined;
  if (options.functionWorkers) {
    const sourced = (name: string) => (definition.functions[name]!.events ?? []).some((e) => 'sqs' in e || 'eventBridge' in e);
    workers = await startFunctionWorkers({
      handlers: handlerFiles,
      threads: Object.fromEntries(functionNames.map((name) => [name, sourced(name) ? options.functionWorkers! : 1])),
      detailedCalls: options.onWorkerCall !== undefined,
      onCall: (call) => {
        requests.add(call.service, call.op);
        options.onWorkerCall?.(call);
      },
      region: process.env.AWS_REGION!,
      accountId: accountId,
    });
    // A worker is told when the stack abandons an invocation (its timeout), and fences it from then on.
    for (const name of functionNames)
      handlers[name] = (event, context) => workers!.invoke(name, event, context, currentInvocation()?.signal);
  } else {
    for (const name of functionNames) {
      const { file, exported } = handlerFiles[name]!;
      const module = (await import(`../${file}`)) as Record<string, Handler>;
      const handler = module[exported];
      if (!handler) throw new Error(`${file} exports no ${exported}`);
      handlers[name] = handler;
    }
    wrapForFaults(faultState);
  }
  const inThisThread = (fault: string) => {
    if (workers) throw new Error(`faults.${fault} needs the functions in this thread (no functionWorkers)`);
  };

  /** One run of a function's handler; the caller (the SQS poller, the async invoker) owns its timeout and retries. */
  const dispatch = async (name: string, event: unknown, context: Context) => {
    try {
      return await handlers[name]!(event, context);
    } catch (error) {
      options.onHandlerError?.(name, error);
      throw error;
    }
  };

  bus = new LocalEventBus({ region: definition.provider.region, ...options.bus });
  const timers: NodeJS.Timeout[] = [];
  const timeScale = options.timeScale ?? definition.custom?.local?.timeScale ?? 1;
  const startGraceSeconds = Number(process.env.START_GRACE_SECONDS) || undefined;
  const lambda = startLocalLambda({ definition, refs, region: process.env.AWS_REGION!, accountId, timeScale, dispatch, startGraceSeconds });
  /** Asynchronous invocation, as EventBridge and EventBridge Scheduler make it: Lambda owns the event from here. */
  const invokeAsync = (name: string, event: unknown) => lambda.invoker.invoke(name, event);
  let poller: SqsPoller | undefined;
  const pollers: SqsPoller[] = [];
  const reconcilerName = functionNames.find((name) => definition.functions[name]!.events?.some((e) => 'schedule' in e));

  for (const name of functionNames) {
    for (const [index, event] of (definition.functions[name]!.events ?? []).entries()) {
      if ('eventBridge' in event) {
        const { pattern } = event.eventBridge as { pattern: Record<string, unknown> };
        // The target is Lambda's async invoke: it always accepts (EventBridge's own retries never start), and the delivery
        // settles when Lambda is done with the event, so bus.drain() still means "all handled".
        bus.addRule({ name: `${name}-${index}`, pattern, target: (e) => invokeAsync(name, e).then(noop, noop) });
      } else if ('sqs' in event) {
        const sqsEvent = event.sqs as { arn: unknown; batchSize?: number; maximumBatchingWindow?: number; functionResponseType?: string };
        const arn = sqsEvent.arn as { 'Fn::GetAtt': [string, string] };
        const queueId = arn['Fn::GetAtt'][0];
        const started = startSqsPoller({
          client: clients.sqs,
          queueUrl: refs.ref[queueId]!,
          queueArn: refs.arn[queueId]!,
          batchSize: sqsEvent.batchSize ?? 10,
          maximumBatchingWindowMs: (sqsEvent.maximumBatchingWindow ?? 0) * 1000 * Math.min(1, timeScale * 10),
          reportBatchItemFailures: sqsEvent.functionResponseType === 'ReportBatchItemFailures',
          concurrency: options.pollerConcurrency ?? 4,
          waitTimeSeconds: options.pollWaitSeconds ?? 1,
          functionName: localFunctionName(name),
          functionTimeoutMs: enforcedTimeoutMs(definition.functions[name]!, startGraceSeconds),
          handler: (e: SQSEvent, context: Context) => dispatch(name, e, context) as never,
          ...(options.onPollerError && { onError: options.onPollerError }),
        });
        pollers.push(started);
        if (queueId === 'JobQueue') poller = started;
      } else if ('schedule' in event && options.schedules !== false) {
        const rate = typeof event.schedule === 'string' ? event.schedule : (event.schedule as { rate: string }).rate;
        const everyMs = Math.max(50, rateToMs(rate) * timeScale);
        let running = false;
        const timer = setInterval(() => {
          if (running) return;
          running = true;
          void invokeAsync(name, { source: 'aws.events', 'detail-type': 'Scheduled Event' })
            .catch(() => undefined)
            .finally(() => (running = false));
        }, everyMs);
        timers.push(timer);
      }
    }
  }
  if (!poller) throw new Error('serverless.yml has no function on the job queue');
  const activePoller = poller;

  const env = process.env;
  return {
    definition,
    refs,
    queueUrl: env.QUEUE_URL!,
    deadLetterUrl: env.DLQ_URL!,
    callbackQueueUrl: env.CALLBACK_QUEUE_URL!,
    tableName: env.TABLE_NAME!,
    sqs: clients.sqs,
    dynamodb: clients.dynamodb,
    doc: clients.doc,
    simulator,
    bus,
    poller: activePoller,
    pollers,
    requests,
    functionThreads: workers?.threads() ?? {},
    indexLagMs: indexLagOf(options.dynamoFaults),
    lambda: lambda.invoker,
    faults: {
      loseWakeUps: (n) => (inThisThread('loseWakeUps'), (faultState.loseWakeUps += n)),
      crashAfterAcquire: (n) => (inThisThread('crashAfterAcquire'), (faultState.crashAfterAcquire += n)),
      crashAfterStart: (n) => (inThisThread('crashAfterStart'), (faultState.crashAfterStart += n)),
      async restartEmulators(which, restart) {
        if (emulators) return emulators.restart(which, restart);
        if (!options.emulatorControl) throw new Error('restartEmulators needs the stack to own its emulators, or options.emulatorControl');
        await options.emulatorControl.restart(which, restart);
      },
    },
    async reconcileNow() {
      if (!reconcilerName) throw new Error('serverless.yml has no scheduled function');
      return (await invokeAsync(reconcilerName, { source: 'aws.events', 'detail-type': 'Scheduled Event' })) as ReconcileReport;
    },
    fireJobSet: (set, scheduledTime) => invokeAsync('jobSets', { set, scheduledTime }),
    async stop() {
      for (const timer of timers) clearInterval(timer);
      await lambda.close(); // events waiting for a retry are dropped; attempts running are shut down, then awaited
      await Promise.all(pollers.map((p) => p.stop()));
      await simulator.close();
      await bus!.close();
      await workers?.close();
      dynamoFaults?.stop();
      await emulators?.close();
    },
  };
}

const noop = () => undefined;

function splitHandler(handler: string): [string, string] {
  const dot = handler.lastIndexOf('.');
  return [handler.slice(0, dot), handler.slice(dot + 1)];
}

interface FaultState {
  loseWakeUps: number;
  crashAfterAcquire: number;
  crashAfterStart: number;
}

/** SQS-level faults, at the SDK middleware of the functions' own client. */
function installFaults(sqs: SQSClient, queueUrl: string): FaultState {
  const state: FaultState = { loseWakeUps: 0, crashAfterAcquire: 0, crashAfterStart: 0 };
  sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const input = (args as { input: { QueueUrl?: string; DelaySeconds?: number } }).input;
      if (context.commandName === 'SendMessageCommand' && input.QueueUrl === queueUrl && !input.DelaySeconds && state.loseWakeUps > 0) {
        state.loseWakeUps--;
        return { output: { $metadata: {}, MessageId: 'lost-by-fault-injection' }, response: {} } as never;
      }
      return next(args);
    },
    { step: 'initialize', name: 'sluiceLocalFaults' },
  );
  return state;
}

/**
 * Process crashes of the acquirer, injected around the starters it calls: "after the slot, before the start" leaves
 * the slot taken and the job in `starting`; "after the start, before recording" leaves a run the ledger does not know.
 * Either way the message is not deleted and comes back after the queue's visibility timeout, as after a real crash.
 */
function wrapForFaults(state: FaultState): void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { container } = require('../shared/runtime/container') as typeof import('../shared/runtime/container');
  for (const starter of Object.values(container().deps.starters)) {
    const start = starter.start.bind(starter);
    starter.start = async (...args) => {
      if (state.crashAfterAcquire > 0) {
        state.crashAfterAcquire--;
        throw new Error('fault injection: acquirer crashed after taking the slot, before starting the run');
      }
      const result = await start(...args);
      if (state.crashAfterStart > 0) {
        state.crashAfterStart--;
        throw new Error('fault injection: acquirer crashed after starting the run, before recording it');
      }
      return result;
    };
  }
}
