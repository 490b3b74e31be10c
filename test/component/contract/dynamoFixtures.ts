import { DeleteTableCommand, DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoJobLedger } from '../../../shared/adapters/dynamodb/jobLedger';
import { jobKey } from '../../../shared/adapters/dynamodb/keys';
import { DynamoLeaseStore } from '../../../shared/adapters/dynamodb/leaseStore';
import type { StoreFixture } from '../../contract/jobLedger.contract';
import type { ScheduleStoreFixture } from '../../contract/scheduleStore.contract';
import { DynamoScheduleStore } from '../../../shared/adapters/dynamodb/scheduleStore';
import { localDocumentClient, localDynamoClient } from '../../support/dynamodbLocal';
import { spawnEmulators } from '../../support/spawnEmulators';
import { createSluiceTable } from '../../support/table';
import { DynamoFault, type DynamoFaultLayer, installDynamoFaults, randomFaults } from '../../../local/faults/dynamoFaults';

/**
 * Faults every contract suite meets (local/faults/dynamoFaults.ts): writes meeting a transaction in flight are
 * refused as DynamoDB refuses them, and a tenth of the requests are answered with a fault after which nothing was
 * written, at most twice in a row on an item, so every adapter must absorb them and answer as without them. Mostly
 * contention (a conflict, a transaction cancelled for capacity), which the adapters retry; a server error and
 * throttling, which the SDK retries, less often (the SDK waits up to 500 ms after a throttle).
 * SLUICE_CONTRACT_FAULT_SEED picks the seed.
 */
export const CONTRACT_FAULTS = {
  rate: Number(process.env.SLUICE_CONTRACT_FAULT_RATE ?? 0.1),
  faults: [
    DynamoFault.Conflict,
    DynamoFault.Conflict,
    DynamoFault.Conflict,
    DynamoFault.TransactionThrottled,
    DynamoFault.ServerError,
    DynamoFault.Throttle,
  ],
  seed: Number(process.env.SLUICE_CONTRACT_FAULT_SEED ?? 2026),
};

/** Clients for one local endpoint, and fixtures that each get a fresh table built from serverless.yml. */
export class DynamoFixtures {
  readonly client: DynamoDBClient;
  /** The adapters' client, with the fault layer. */
  readonly doc: DynamoDBDocumentClient;
  readonly faults: DynamoFaultLayer;

  constructor(endpoint: string) {
    this.client = localDynamoClient(endpoint);
    this.doc = localDocumentClient(endpoint);
    this.faults = installDynamoFaults(this.doc, { policy: randomFaults(CONTRACT_FAULTS) });
  }

  async table(): Promise<{ name: string; drop(): Promise<void> }> {
    const name = await createSluiceTable(this.client);
    await this.untilActive(name);
    return { name, drop: async () => void (await this.client.send(new DeleteTableCommand({ TableName: name }))) };
  }

  /** Both adapters over one fresh table, as deployed: the job records and the pools live side by side. */
  async store(retentionDays = 7): Promise<StoreFixture> {
    const table = await this.table();
    return {
      ledger: new DynamoJobLedger(this.doc, table.name, { retentionDays }),
      leases: new DynamoLeaseStore(this.doc, table.name, { retentionDays }),
      retentionDays,
      // A raw read: the adapter's get() strips expiresAt, the TTL attribute DynamoDB acts on.
      expiresAtOf: async (jobId) => {
        const { Item } = await this.doc.send(new GetCommand({ TableName: table.name, Key: jobKey(jobId), ConsistentRead: true }));
        return Item?.expiresAt as number | undefined;
      },
      cleanup: table.drop,
    };
  }

  /** The schedule store beside the ledger and the lease store, over one fresh table. */
  async scheduleStore(): Promise<ScheduleStoreFixture> {
    const table = await this.table();
    return {
      schedule: new DynamoScheduleStore(this.doc, table.name),
      ledger: new DynamoJobLedger(this.doc, table.name),
      leases: new DynamoLeaseStore(this.doc, table.name),
      cleanup: table.drop,
    };
  }

  /** dynalite answers CreateTable before the table is usable (ResourceNotFoundException until it is ACTIVE). */
  private async untilActive(name: string, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const { Table } = await this.client.send(new DescribeTableCommand({ TableName: name }));
      if (Table?.TableStatus === 'ACTIVE') return;
      if (Date.now() > deadline) throw new Error(`table ${name} not ACTIVE after ${timeoutMs} ms (${Table?.TableStatus})`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  destroy(): void {
    this.doc.destroy();
    this.client.destroy();
  }
}

/** A local DynamoDB endpoint that a test file starts and stops. */
export interface LocalDynamoDb {
  endpoint: string;
  stop(): Promise<void>;
}

/** dynalite with its transaction shim (local/dynaliteTransactions.ts), in the emulators' child process (fauxqs comes along, unused). */
export async function startDynalite(): Promise<LocalDynamoDb> {
  const emulators = await spawnEmulators();
  return { endpoint: emulators.dynamodbEndpoint, stop: () => emulators.stop() };
}

/**
 * What the contract files share: `start` runs before the file's tests and the endpoint stops after them. The returned
 * function gives the fixtures on that endpoint; call it inside tests (or in the factories the contract suites call).
 */
export function useDynamoFixtures(start: () => Promise<LocalDynamoDb>, stopTimeoutMs?: number): () => DynamoFixtures {
  // Every test of the file: a sequence of a few hundred requests, some of them retried after a fault (the SDK waits up
  // to half a second after a throttle), on a loaded machine takes longer than Jest's default 5 s.
  jest.setTimeout(60_000);
  let local: LocalDynamoDb | undefined;
  let fixtures: DynamoFixtures | undefined;
  beforeAll(async () => {
    local = await start();
    fixtures = new DynamoFixtures(local.endpoint);
  }, 60_000);
  afterAll(async () => {
    fixtures?.destroy();
    await local?.stop();
  }, stopTimeoutMs);
  return () => {
    if (!fixtures) throw new Error('the local DynamoDB starts in beforeAll: use the fixtures inside tests');
    return fixtures;
  };
}
