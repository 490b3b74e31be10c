import { TakeOutcome } from '../../../shared/ports/leaseStore';
import { appflow, T } from '../../contract/jobLedger.contract';
import { unit } from '../../support/demands';
import { InMemoryStore } from '../../support/fakes';

/**
 * The in-memory store's holders index can lag, as a DynamoDB global secondary index does (read eventually consistent
 * only): a slot taken or given back shows in `holders` only some calls later. The explorer's world runs with it.
 */
describe('the in-memory holders index, lagging', () => {
  async function take(store: InMemoryStore, jobId: string): Promise<void> {
    const { record } = await store.register(appflow(jobId, 'p'), T);
    const move = { jobId, version: record.version, to: 'starting' as const, patch: { attempt: `msg-${jobId}` } };
    expect((await store.take(unit('p'), move, T + 1)).outcome).toBe(TakeOutcome.Taken);
  }
  const listed = async (store: InMemoryStore) => (await store.holders('p')).holders.map((holder) => holder.jobId);

  test('a slot taken shows only after the lag, and one given back stays listed as long', async () => {
    // Prepare: a pool, and a store whose index lags 3 calls
    const store = new InMemoryStore({ retentionDays: 30, holdersIndexLagCalls: 3 });
    await store.createPool('p', 5);
    await take(store, 'j1');
    // Assess: the take was the last call: the next 3 calls do not see it
    expect(await listed(store)).toEqual([]);
    expect(await listed(store)).toEqual([]);
    expect(await listed(store)).toEqual([]);
    expect(await listed(store)).toEqual(['j1']);
    // Act: the slot given back (its record moved off the slot by a free)
    const record = (await store.get('j1'))!;
    expect(await store.free(unit('p'), { jobId: 'j1', version: record.version, to: 'succeeded' }, T + 2)).toBe(true);
    // Assess: still listed for as long
    expect(await listed(store)).toEqual(['j1']);
    expect(await listed(store)).toEqual(['j1']);
    expect(await listed(store)).toEqual(['j1']);
    expect(await listed(store)).toEqual([]);
  });

  test('a lag of one call hides a change from the next call only', async () => {
    const store = new InMemoryStore({ retentionDays: 30, holdersIndexLagCalls: 1 });
    await store.createPool('p', 5);
    await take(store, 'j1');
    expect(await listed(store)).toEqual([]);
    expect(await listed(store)).toEqual(['j1']);
  });

  test('catching up shows every change at once; without a lag the index is read as written', async () => {
    const lagging = new InMemoryStore({ retentionDays: 30, holdersIndexLagCalls: 100 });
    await lagging.createPool('p', 5);
    await take(lagging, 'j1');
    await take(lagging, 'j2');
    expect(await listed(lagging)).toEqual([]);
    lagging.catchUpHoldersIndex();
    expect(await listed(lagging)).toEqual(['j1', 'j2']);

    const consistent = new InMemoryStore({ retentionDays: 30 });
    await consistent.createPool('p', 5);
    await take(consistent, 'j1');
    expect(await listed(consistent)).toEqual(['j1']);
  });
});
