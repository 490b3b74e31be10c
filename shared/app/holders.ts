import type { HolderView, LeaseStore } from '../ports/leaseStore';

/** Every holder of a pool, read a page of the holders index at a time. */
export async function allHolders(leases: Pick<LeaseStore, 'holders'>, pool: string): Promise<HolderView[]> {
  const all: HolderView[] = [];
  let after: string | undefined;
  do {
    const page = await leases.holders(pool, { after });
    all.push(...page.holders);
    after = page.next;
  } while (after !== undefined);
  return all;
}
