import type { LocalStack } from '../../../local/stack';
import { type DeliveryWatch, watchDeliveries } from '../../support/probes';
import { startFaultStack } from '../workload';

export interface CrashFixture {
  /** The file's fault stack; it starts in beforeAll, so read it inside tests. */
  readonly stack: LocalStack;
  /** Messages the acquirer failed in this test because of an injected crash (each comes back after the visibility timeout). */
  crashes(): number;
}

/**
 * What the crash test files share: a fault stack with `pools` for the whole file, and a watch on the acquirer's
 * deliveries for each test, so that a test counts only its own crashes.
 */
export function useCrashStack(pools: Record<string, number>): CrashFixture {
  let stack: LocalStack | undefined;
  let deliveries: DeliveryWatch | undefined;
  beforeAll(async () => {
    stack = await startFaultStack(pools);
  }, 60_000);
  afterAll(() => stack?.stop());
  beforeEach(() => {
    deliveries = watchDeliveries();
  });
  afterEach(() => deliveries?.stop());
  return {
    get stack() {
      if (!stack) throw new Error('the crash stack starts in beforeAll: read it inside tests');
      return stack;
    },
    crashes: () => (deliveries?.errors() ?? []).filter((e) => String(e).includes('fault injection')).length,
  };
}
