import { describeScheduleStoreContract } from '../../contract/scheduleStore.contract';
import { InMemoryStore } from '../../support/fakes';

// The fake's schedule store is the same InMemoryStore as its ledger and lease store.
describeScheduleStoreContract('InMemoryStore', async () => {
  const store = new InMemoryStore({ retentionDays: 7 });
  return { schedule: store, ledger: store, leases: store };
});
