import { describeLeaseStoreContract } from '../../contract/leaseStore.contract';
import { InMemoryStore } from '../../support/fakes';

// One InMemoryStore is both ports, over one set of job records.
describeLeaseStoreContract('InMemoryStore', async () => {
  const store = new InMemoryStore({ retentionDays: 7 });
  return { ledger: store, leases: store, retentionDays: 7, expiresAtOf: async (jobId) => store.expiresAtOf(jobId) };
});
