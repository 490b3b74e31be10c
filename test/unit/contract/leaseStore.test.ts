import { describeLeaseStoreContract } from '../../contract/leaseStore.contract';
import { InMemoryLeaseStore } from '../../support/fakes';

describeLeaseStoreContract('InMemoryLeaseStore', async () => ({ store: new InMemoryLeaseStore() }));
