import { describeSetRunStoreContract } from '../../contract/setRunStore.contract';
import { InMemorySetRuns } from '../../support/fakes';

describeSetRunStoreContract('InMemorySetRuns', async () => ({ store: new InMemorySetRuns() }));
