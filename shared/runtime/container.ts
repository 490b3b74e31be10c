import { sluiceServices } from '../app/services';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics as PowertoolsMetrics } from '@aws-lambda-powertools/metrics';
import { Acquirer } from '../app/acquireJob';
import { CompleteRun } from '../app/completeRun';
import type { SluiceDeps } from '../app/deps';
import { PoolAdmin } from '../app/poolAdmin';
import { Reconciler } from '../app/reconcile';
import { DynamoScheduleStore } from '../adapters/dynamodb/scheduleStore';
import { EventBridgeClient } from '@aws-sdk/client-eventbridge';
import { awsClients, jobApiClient } from '../adapters/awsClients';
import { DynamoSetRunStore } from '../adapters/dynamodb/setRunStore';
import { EventBridgePublisher } from '../adapters/eventbridge/eventPublisher';
import { DynamoJobLedger } from '../adapters/dynamodb/jobLedger';
import { DynamoLeaseStore } from '../adapters/dynamodb/leaseStore';
import { EmfMetrics } from '../adapters/powertools/emfMetrics';
import { SqsJobQueue } from '../adapters/sqs/jobQueue';
import { readEnv, settingsFrom } from '../config/settings';
import type { Loader } from '../app/loadScheduled';
import { kindStarters } from '../kinds/starters';
import { systemClock, systemRandom } from '../ports/clock';

export interface Container {
  deps: SluiceDeps;
  logger: Logger;
  metrics: PowertoolsMetrics;
  acquirer: Acquirer;
  completeRun: CompleteRun;
  reconciler: Reconciler;
  poolAdmin: PoolAdmin;
  loader: Loader;
}

let built: Container | undefined;

/** The composition root: real adapters from the environment, built on first use and kept for warm invocations. */
export function container(): Container {
  if (built) return built;
  const env = readEnv();
  const clients = awsClients();
  // From the environment serverless.yml sets (service `sluice-<stage>`): the alarms and the dashboard read the same names.
  const logger = new Logger({ serviceName: env.POWERTOOLS_SERVICE_NAME });
  const metrics = new PowertoolsMetrics({ namespace: env.POWERTOOLS_METRICS_NAMESPACE, serviceName: env.POWERTOOLS_SERVICE_NAME });
  // Sluice's own events (a job ended, a job set run completed), on the stage's bus.
  const events = new EventBridgePublisher(
    jobApiClient('eventbridge', () => new EventBridgeClient({})),
    env.EVENT_BUS_NAME,
  );
  const deps: SluiceDeps = {
    leases: new DynamoLeaseStore(clients.doc, env.TABLE_NAME, { retentionDays: env.LEDGER_RETENTION_DAYS, clock: systemClock }),
    ledger: new DynamoJobLedger(clients.doc, env.TABLE_NAME, { retentionDays: env.LEDGER_RETENTION_DAYS }),
    schedule: new DynamoScheduleStore(clients.doc, env.TABLE_NAME, { retentionDays: env.LEDGER_RETENTION_DAYS }),
    queue: new SqsJobQueue(clients.sqs, env.QUEUE_URL, env.DLQ_URL),
    // One per kind of shared/kinds/registry.ts, each on the process's client of its job API.
    starters: kindStarters({ warn: (message, details) => logger.warn(message, details) }),
    clock: systemClock,
    random: systemRandom,
    log: logger,
    metrics: new EmfMetrics(metrics),
    settings: settingsFrom(env),
    sets: { store: new DynamoSetRunStore(clients.doc, env.TABLE_NAME, { retentionDays: env.LEDGER_RETENTION_DAYS }), events },
    events,
  };
  built = {
    deps,
    logger,
    metrics,
    ...sluiceServices(deps),
  };
  return built;
}
