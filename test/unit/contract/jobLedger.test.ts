import { describeJobLedgerContract } from '../../contract/jobLedger.contract';
import { InMemoryStore } from '../../support/fakes';

// One InMemoryStore is both ports, over one set of job records.
describeJobLedgerContract('InMemoryStore', async () => {
  const store = new InMemoryStore({ retentionDays: 7 });
  return { ledger: store, leases: store, retentionDays: 7, expiresAtOf: async (jobId) => store.expiresAtOf(jobId) };
});
