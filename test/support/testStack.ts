import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoLeaseStore } from '../../shared/adapters/dynamodb/leaseStore';
import { allHolders } from '../../shared/app/holders';
import { randomUUID } from 'node:crypto';
import { enqueueJobs } from '../../shared/cli/enqueue';
import { type LocalStack, type LocalStackOptions, startLocalStack } from '../../local/stack';
import { jobIdOfRun } from '../../local/simulators/simulatedKinds';
import { waitFor } from './waitFor';

const clientsFor = new WeakMap<LocalStack, { doc: DynamoDBDocumentClient; sqs: SQSClient }>();

/** The test's own clients: its reads must not count as Sluice's requests. */
export function testClients(stack: LocalStack): { doc: DynamoDBDocumentClient; sqs: SQSClient } {
  let clients = clientsFor.get(stack);
  if (!clients) {
    const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
    const dynamodb = new DynamoDBClient({ endpoint: process.env.SLUICE_TEST_DYNAMODB_ENDPOINT, region: 'us-east-1', credentials });
    clients = {
      doc: DynamoDBDocumentClient.from(dynamodb),
      sqs: new SQSClient({
        endpoint: process.env.SLUICE_TEST_SQS_ENDPOINT,
        region: 'us-east-1',
        credentials,
        useQueueUrlAsEndpoint: false,
      }),
    };
    clientsFor.set(stack, clients);
  }
  return clients;
}

/** A local stack on the shared emulators of the integration run, with names of its own. */
export async function startTestStack(options: Omit<LocalStackOptions, 'endpoints' | 'nameSuffix'> = {}): Promise<LocalStack> {
  const sqs = process.env.SLUICE_TEST_SQS_ENDPOINT;
  const dynamodb = process.env.SLUICE_TEST_DYNAMODB_ENDPOINT;
  if (!sqs || !dynamodb) throw new Error('integration tests need the emulators of test/integration/setup/globalSetup.ts');
  return startLocalStack({ endpoints: { sqs, dynamodb }, nameSuffix: `-${randomUUID().slice(0, 8)}`, pollWaitSeconds: 1, ...options });
}

export async function enqueue(stack: LocalStack, specs: unknown[]): Promise<string[]> {
  const report = await enqueueJobs(testClients(stack).sqs, stack.queueUrl, specs);
  if (report.rejected.length) throw new Error(`rejected: ${JSON.stringify(report.rejected)}`);
  return report.sent;
}

export async function jobState(stack: LocalStack, jobId: string): Promise<string | undefined> {
  const { Item } = await testClients(stack).doc.send(
    new GetCommand({ TableName: stack.tableName, Key: { pk: `JOB#${jobId}`, sk: 'JOB' }, ConsistentRead: true }),
  );
  return Item?.state as string | undefined;
}

/** The pool's counter item with its holders (job id -> kind and since, from the holders index), as tests look at a pool. */
export async function poolItem(
  stack: LocalStack,
  pool = 'default',
): Promise<{ limit: number; inUse: number; holders: Record<string, unknown> } | undefined> {
  const { Item } = await testClients(stack).doc.send(
    new GetCommand({ TableName: stack.tableName, Key: { pk: `POOL#${pool}`, sk: 'POOL' }, ConsistentRead: true }),
  );
  if (!Item) return undefined;
  const leases = new DynamoLeaseStore(testClients(stack).doc, stack.tableName);
  const holders = Object.fromEntries((await allHolders(leases, pool)).map(({ jobId, kind, since }) => [jobId, { kind, since }]));
  return { ...(Item as { limit: number; inUse: number }), holders };
}

/** Waits until every job has a terminal state in the ledger and returns the states. */
export async function waitForJobsDone(stack: LocalStack, jobIds: string[], timeoutMs = 30_000): Promise<Record<string, string>> {
  const states: Record<string, string> = {};
  const open = () => jobIds.filter((id) => !['succeeded', 'failed', 'dead'].includes(states[id] ?? ''));
  try {
    await waitFor(
      `${jobIds.length} jobs to finish`,
      async () => {
        for (const id of open()) {
          const state = await jobState(stack, id);
          if (state) states[id] = state;
        }
        return open().length === 0;
      },
      timeoutMs,
      50,
    );
  } catch (error) {
    const why = await whyNotEnded(stack, open()).catch((cause: unknown) => `(could not read why: ${String(cause)})`);
    throw new Error(`${(error as Error).message}: ${open().length} not ended; ${why}`);
  }
  return states;
}

/**
 * For a timeout's message: the first jobs not ended, each with its record (or none), and each of their pools' counter
 * and slot holders with the holders' states (of a holder: its id, state, version, times and run id).
 */
async function whyNotEnded(stack: LocalStack, open: string[]): Promise<string> {
  const { doc } = testClients(stack);
  const record = async (id: string) =>
    (await doc.send(new GetCommand({ TableName: stack.tableName, Key: { pk: `JOB#${id}`, sk: 'JOB' }, ConsistentRead: true }))).Item;
  const records = await Promise.all(open.slice(0, 5).map(async (id) => [id, (await record(id)) ?? null] as const));
  const pools = [...new Set(records.flatMap(([, r]) => (r ? [String(r.pool)] : [])))];
  const slots = await Promise.all(
    pools.map(async (pool) => {
      const item = await poolItem(stack, pool);
      const holders = await Promise.all(
        Object.keys(item?.holders ?? {}).map(async (id) => {
          const r = await record(id);
          return (
            r && { id, state: r.state, version: r.version, updatedAt: r.updatedAt, claimableAt: r.claimableAt, executionId: r.executionId }
          );
        }),
      );
      return { pool, inUse: item?.inUse, limit: item?.limit, holders };
    }),
  );
  return `first ${JSON.stringify(records)}; their pools ${JSON.stringify(slots)}`;
}

/** Takes every message now in a queue (the DLQ, in tests), with its attributes. */
export async function drainQueue(
  stack: LocalStack,
  queueUrl: string,
): Promise<Array<{ body: string; attributes: Record<string, string>; receiveCount: number }>> {
  const out: Array<{ body: string; attributes: Record<string, string>; receiveCount: number }> = [];
  for (;;) {
    const { Messages } = await testClients(stack).sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
        VisibilityTimeout: 60,
      }),
    );
    if (!Messages?.length) return out;
    for (const m of Messages) {
      const attributes = Object.fromEntries(Object.entries(m.MessageAttributes ?? {}).map(([k, v]) => [k, v.StringValue ?? '']));
      out.push({ body: m.Body ?? '', attributes, receiveCount: Number(m.Attributes?.ApproximateReceiveCount ?? 0) });
    }
  }
}

export async function queueDepth(stack: LocalStack, queueUrl: string): Promise<number> {
  const { Attributes } = await testClients(stack).sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  return (
    Number(Attributes?.ApproximateNumberOfMessages ?? 0) +
    Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0) +
    Number(Attributes?.ApproximateNumberOfMessagesDelayed ?? 0)
  );
}

/** Runs started per job id (by the AppFlow client token / the Glue job-id argument), from the simulator's record. */
export function runsPerJob(stack: LocalStack): Map<string, number> {
  const counts = new Map<string, number>();
  for (const run of stack.simulator.runs()) {
    const id = jobIdOfRun(run) ?? `?${run.executionId}`;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}
