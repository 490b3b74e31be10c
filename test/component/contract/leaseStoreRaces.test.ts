import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoLeaseStore } from '../../../shared/adapters/dynamodb/leaseStore';
import { AcquireOutcome } from '../../../shared/ports/leaseStore';
import { startDynalite, useDynamoFixtures } from './dynamoFixtures';

/**
 * Races the lease store's read-back must tell apart from a full pool, made deterministic: another writer acts between
 * the failed conditional write and the read that explains it.
 */
const fixtures = useDynamoFixtures(startDynalite);

/** A document client that runs `meanwhile` once, right after the first acquire write fails its condition. */
function raceAfterFirstFailedAcquire(doc: DynamoDBDocumentClient, meanwhile: () => Promise<void>): DynamoDBDocumentClient {
  let raced = false;
  return new Proxy(doc, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return async (command: UpdateCommand) => {
        try {
          return await target.send(command);
        } catch (error) {
          const isAcquire = command instanceof UpdateCommand && String(command.input.UpdateExpression).startsWith('SET holders.#job');
          if (!raced && isAcquire) {
            raced = true;
            await meanwhile();
          }
          throw error;
        }
      };
    },
  });
}

test('an acquire that loses the race to create a new pool takes a slot in it, not "full"', async () => {
  const table = await fixtures().table();
  try {
    const other = new DynamoLeaseStore(fixtures().doc, table.name);
    const store = new DynamoLeaseStore(
      raceAfterFirstFailedAcquire(fixtures().doc, async () => void (await other.createPool('fresh', 2))),
      table.name,
    );
    expect(await store.acquire('fresh', 'j1', { kind: 'glue', since: 1 })).toBe(AcquireOutcome.Acquired);
    expect(await other.getPool('fresh')).toEqual({ name: 'fresh', limit: 2, inUse: 1, holders: { j1: { kind: 'glue', since: 1 } } });
  } finally {
    await table.drop();
  }
}, 30_000);

test('an acquire that failed on a full pool takes the slot freed before its read-back', async () => {
  const table = await fixtures().table();
  try {
    const other = new DynamoLeaseStore(fixtures().doc, table.name);
    await other.createPool('busy', 1);
    expect(await other.acquire('busy', 'a', { kind: 'glue', since: 1 })).toBe(AcquireOutcome.Acquired);
    const store = new DynamoLeaseStore(
      raceAfterFirstFailedAcquire(fixtures().doc, async () => void (await other.release('busy', 'a'))),
      table.name,
    );
    expect(await store.acquire('busy', 'b', { kind: 'glue', since: 2 })).toBe(AcquireOutcome.Acquired);
    expect((await other.getPool('busy'))!.holders).toEqual({ b: { kind: 'glue', since: 2 } });
  } finally {
    await table.drop();
  }
}, 30_000);

test('a pool that stays full is reported full after the write fails, without retrying', async () => {
  const table = await fixtures().table();
  try {
    const other = new DynamoLeaseStore(fixtures().doc, table.name);
    await other.createPool('busy', 1);
    await other.acquire('busy', 'a', { kind: 'glue', since: 1 });
    let writes = 0;
    const counting = new Proxy(fixtures().doc, {
      get(target, prop, receiver) {
        if (prop !== 'send') return Reflect.get(target, prop, receiver);
        return (command: UpdateCommand) => {
          if (command instanceof UpdateCommand) writes++;
          return target.send(command);
        };
      },
    });
    expect(await new DynamoLeaseStore(counting, table.name).acquire('busy', 'b', { kind: 'glue', since: 2 })).toBe(AcquireOutcome.Full);
    expect(writes).toBe(1);
  } finally {
    await table.drop();
  }
}, 30_000);
