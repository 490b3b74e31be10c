import type { GlueJob } from '../../shared/kinds/registry';
import { deliverSent, type FakeWorld, glueJob } from './fakes';

/** The tests of pools without a limit and of a pool limited again, on the in-memory world (test/support/fakes). */

/** A Glue job of the pool `fanout`. */
export const fanout = (id: string, extra: Partial<GlueJob> = {}): GlueJob => ({ ...glueJob(id, 'fanout'), ...extra });

/** The execution id of the job's first run. */
export const runOf = (world: FakeWorld, id: string): string => world.starters.glue.runsOf(id)[0]!.executionId;

/** The settle time passes (adoptSettleSeconds): every invocation on the configuration before the deploy has ended. */
export function settle(world: FakeWorld): void {
  world.clock.advance(world.settings.adoptSettleMs);
}

/** A deploy that gives `fanout` this limit (it was unlimited). */
export const limitAgain = (world: FakeWorld, limit: number): void =>
  void Object.assign(world.settings, { pools: { default: 1, fanout: limit }, unlimitedPools: [] });

/** The reconciler runs `times` times, each followed by the delivery of what it sent (wake-ups). */
export async function reconcileAndDeliver(world: FakeWorld, times: number): Promise<void> {
  for (let i = 0; i < times; i++) {
    await world.reconciler.run();
    await deliverSent(world);
  }
}
