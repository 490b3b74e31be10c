import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoJobLedger } from '../../../shared/adapters/dynamodb/jobLedger';
import { DynamoLeaseStore } from '../../../shared/adapters/dynamodb/leaseStore';
import { RateBeliefs, rateBookingTuning } from '../../../shared/adapters/dynamodb/leases/rateBookings';
import { TakeOutcome } from '../../../shared/ports/leaseStore';
import { T } from '../../contract/jobLedger.contract';
import { unit } from '../../support/demands';
import { ManualClock } from '../../support/fakes/manualClock';
import { startDynalite, useDynamoFixtures } from './dynamoFixtures';

/**
 * Start rates under a burst, in one instance of the adapter (an acquirer environment handles a batch of messages at
 * once): its bookings of a gate go one at a time, each on the `tat` the one before it wrote, so none is refused for
 * another's; and its tick elections send one write per due time. Across instances the conditions still decide.
 */
const fixtures = useDynamoFixtures(startDynalite);

/**
 * A document client that counts the writes it sends and those refused for a condition (a lost `tat` fence, a tick
 * already elected). A transaction conflict (the engine's lock on an item, tried again by the adapter) is not one.
 */
function counting(doc: DynamoDBDocumentClient): {
  doc: DynamoDBDocumentClient;
  sent: () => number;
  refused: () => number;
  conflicted: () => number;
} {
  let sent = 0;
  let refused = 0;
  let conflicted = 0;
  const counted = new Proxy(doc, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return async (command: { constructor: { name: string } }) => {
        const write = /^(Put|Update|Delete|TransactWrite)/.test(command.constructor.name);
        if (write) sent++;
        try {
          return await target.send(command as never);
        } catch (error) {
          if (write && failedCondition(error)) refused++;
          else if (write) conflicted++;
          throw error;
        }
      };
    },
  });
  return { doc: counted, sent: () => sent, refused: () => refused, conflicted: () => conflicted };
}

function failedCondition(error: unknown): boolean {
  const { name, CancellationReasons } = error as { name?: string; CancellationReasons?: Array<{ Code?: string }> };
  return name === 'ConditionalCheckFailedException' || (CancellationReasons ?? []).some((r) => r.Code === 'ConditionalCheckFailed');
}

const NO_WAIT = { sleep: async () => undefined, random: () => 0 };

describe('start-rate bookings under a burst (dynalite)', () => {
  test('12 takes at once in one instance: starts one interval apart up to the horizon, the rest RateLimited, no write refused', async () => {
    const table = await fixtures().table();
    try {
      // Prepare: 2 starts a second; the instance read the pool once (as an acquirer reads a limit it creates)
      const ledger = new DynamoJobLedger(fixtures().doc, table.name);
      const client = counting(fixtures().doc);
      const store = new DynamoLeaseStore(client.doc, table.name, { retentionDays: 30, backoff: NO_WAIT });
      await store.createPool('p', 50);
      await store.setRate('p', 500);
      await store.getPool('p');
      const ids = Array.from({ length: 12 }, (_, i) => `j${String(i).padStart(2, '0')}`);
      const records = await Promise.all(
        ids.map(async (id) => (await ledger.register({ id, pool: 'p', kind: 'appflow', flowName: 'f' }, T)).record),
      );
      const [sent0, refused0, conflicted0] = [client.sent(), client.refused(), client.conflicted()];
      // Act
      const results = await Promise.all(
        records.map((r) => store.take(unit('p'), { jobId: r.jobId, version: r.version, to: 'starting' }, T + 10)),
      );
      // Assess: T+10, +510, ..., +2010, each booked once; then nothing within the horizon, decided without a write
      const booked = results.filter((r) => r.outcome === TakeOutcome.Taken).map((r) => r.startAt! - T);
      expect(booked.sort((a, b) => a - b)).toEqual([10, 510, 1010, 1510, 2010]);
      expect(results.filter((r) => r.outcome === TakeOutcome.RateLimited)).toHaveLength(7);
      expect(client.refused() - refused0).toBe(0);
      expect(client.sent() - sent0 - (client.conflicted() - conflicted0)).toBe(5); // one write per start booked
      expect(await store.getPool('p')).toEqual({ name: 'p', limit: 50, inUse: 5, rate: { intervalMs: 500, tat: T + 2510 } });
    } finally {
      await table.drop();
    }
  });

  test('a burst of parked jobs electing the next tick: one write, one elected', async () => {
    const table = await fixtures().table();
    try {
      const client = counting(fixtures().doc);
      const store = new DynamoLeaseStore(client.doc, table.name);
      await store.createPool('p', 1);
      const [sent0, refused0] = [client.sent(), client.refused()];
      const elected = await Promise.all(Array.from({ length: 10 }, (_, i) => store.claimTick('p', T + 5000, T + i)));
      expect(elected.filter(Boolean)).toHaveLength(1);
      expect(client.sent() - sent0).toBe(1);
      expect(client.refused() - refused0).toBe(0);
      // Another instance does not know it: its write is refused, and it learns the tick from what the refusal returned.
      const other = counting(fixtures().doc);
      const store2 = new DynamoLeaseStore(other.doc, table.name);
      expect(await store2.claimTick('p', T + 5000, T + 20)).toBe(false);
      expect(await store2.claimTick('p', T + 6000, T + 21)).toBe(false);
      expect([other.sent(), other.refused()]).toEqual([1, 1]);
      // A sooner tick, and one once the elected one is past, are elected as before.
      expect(await store.claimTick('p', T + 3000, T + 30)).toBe(true);
      expect(await store.claimTick('p', T + 9000, T + 3001)).toBe(true);
    } finally {
      await table.drop();
    }
  });

  test('two instances booking at once: the fence decides, every start an interval apart, none past the horizon', async () => {
    const table = await fixtures().table();
    try {
      const ledger = new DynamoJobLedger(fixtures().doc, table.name);
      const stores = [0, 1].map(() => new DynamoLeaseStore(fixtures().doc, table.name, { retentionDays: 30, backoff: NO_WAIT }));
      await stores[0]!.createPool('p', 50);
      await stores[0]!.setRate('p', 500);
      const ids = Array.from({ length: 12 }, (_, i) => `k${String(i).padStart(2, '0')}`);
      const records = await Promise.all(
        ids.map(async (id) => (await ledger.register({ id, pool: 'p', kind: 'appflow', flowName: 'f' }, T)).record),
      );
      const results = await Promise.all(
        records.map((r, i) => stores[i % 2]!.take(unit('p'), { jobId: r.jobId, version: r.version, to: 'starting' }, T + 10)),
      );
      const booked = results.filter((r) => r.outcome === TakeOutcome.Taken).map((r) => r.startAt! - T);
      expect(booked.sort((a, b) => a - b)).toEqual([10, 510, 1010, 1510, 2010].slice(0, booked.length));
      const expected: TakeOutcome[] = [TakeOutcome.Taken, TakeOutcome.RateLimited, TakeOutcome.Contended];
      expect(results.every((r) => expected.includes(r.outcome))).toBe(true);
      expect((await stores[0]!.getPool('p'))!.inUse).toBe(booked.length);
    } finally {
      await table.drop();
    }
  });
});

describe('a booking that waited its turn (dynalite)', () => {
  test('is booked at the time it is written, not at the time its caller read before waiting', async () => {
    const table = await fixtures().table();
    try {
      // Prepare: 2 starts a second; the next transaction this instance sends, once armed, takes 5 s on the functions'
      // clock (a slow write)
      const clock = new ManualClock(T);
      let slow = false;
      const doc = new Proxy(fixtures().doc, {
        get(target, prop, receiver) {
          if (prop !== 'send') return Reflect.get(target, prop, receiver);
          return async (command: { constructor: { name: string } }) => {
            if (slow && command.constructor.name === 'TransactWriteCommand') {
              slow = false;
              await null; // the callers that started with it have read the time
              clock.advance(5000);
            }
            return target.send(command as never);
          };
        },
      });
      const ledger = new DynamoJobLedger(fixtures().doc, table.name);
      const store = new DynamoLeaseStore(doc, table.name, { retentionDays: 30, backoff: NO_WAIT, clock });
      await store.createPool('p', 50);
      await store.setRate('p', 500);
      await store.getPool('p');
      const [a, b, c] = await Promise.all(
        ['a', 'b', 'c'].map(async (id) => (await ledger.register({ id, pool: 'p', kind: 'appflow', flowName: 'f' }, T)).record),
      );
      const take = (r: typeof a, now: number) => store.take(unit('p'), { jobId: r!.jobId, version: r!.version, to: 'starting' }, now);
      // Act: two takes read the time together; the second waits for the first's write (5 s) before it books
      const now = clock.now() + 10;
      slow = true;
      const [first, second] = await Promise.all([take(a, now), take(b, now)]);
      // Assess: the first at its time; the second at the time of its own write, 5 s on (not T+510, 5 s before it)
      expect([first.startAt! - T, second.startAt! - T]).toEqual([10, 5010]);
      // A late start's booking (book) waiting behind a take: booked when written too.
      const later = clock.now() + 10;
      slow = true;
      const [third, late] = await Promise.all([take(c, later), store.book(unit('p'), later)]);
      expect(third.startAt! - T).toBe(5510);
      expect(late).toEqual({ startAt: T + 10_010 });
    } finally {
      await table.drop();
    }
  });
});

describe('RateBeliefs.oneAtATime', () => {
  test('runs on a key one at a time, in the order asked; runs on several keys never wait for each other in a cycle', async () => {
    const beliefs = new RateBeliefs();
    const log: string[] = [];
    const gates: Array<() => void> = [];
    const run = (name: string, keys: string[]) =>
      beliefs.oneAtATime(keys, async () => {
        log.push(`${name} in`);
        await new Promise<void>((resolve) => gates.push(resolve));
        log.push(`${name} out`);
      });
    const all = Promise.all([run('a', ['x', 'y']), run('b', ['y', 'x']), run('c', ['x']), run('d', ['z'])]);
    const settle = () => new Promise((resolve) => setImmediate(resolve));
    await settle();
    expect(log).toEqual(['a in', 'd in']);
    while (gates.length > 0) {
      gates.shift()!();
      await settle();
    }
    await all;
    expect(log.filter((line) => line.endsWith('in'))).toEqual(['a in', 'd in', 'b in', 'c in']);
    expect(rateBookingTuning.inTurn).toBe(true);
  });
});
