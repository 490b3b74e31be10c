import { describeJobLedgerContract } from '../../contract/jobLedger.contract';
import { InMemoryJobLedger } from '../../support/fakes';

describeJobLedgerContract('InMemoryJobLedger', async () => {
  const ledger = new InMemoryJobLedger({ retentionDays: 7 });
  return { ledger, retentionDays: 7, expiresAtOf: async (jobId) => ledger.expiresAtOf(jobId) };
});
