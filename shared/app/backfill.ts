import { runLimitMsOf } from '../domain/job';
import { type BackfillCandidate, endByOf, type Holding, planBackfill } from '../domain/backfill';
import { isKeyGate } from '../domain/limits';
import type { PoolSnapshot } from '../domain/pool';
import { type Waiter, waiterDemand } from '../domain/waiting';
import type { SluiceDeps } from './deps';
import { allHolders } from './holders';
import { inParallel } from './inParallel';

/** Waiters behind the head that backfill looks at: a bounded read, whatever the backlog. */
export const BACKFILL_LOOKAHEAD = 24;

/** A pool with more holders than this keeps strict order (reading them all on each release would cost too much). */
export const BACKFILL_MAX_HOLDERS = 200;

/**
 * planBackfill's margin: none, since each pick is checked again against the clock just before its reserve, which stamps
 * its slot with that same time (`startBy`).
 */
export const BACKFILL_MARGIN_MS = 0;

/** A waiter backfill lets in, and the latest time its slot may be taken for it to end by the head's shadow time. */
export interface BackfillPick {
  waiter: Waiter;
  startBy: number;
}

/** Job records read at once for the holders' units and run limits. */
const READ_PARALLEL = 16;

type BackfillDeps = Pick<SluiceDeps, 'leases' | 'ledger' | 'clock' | 'log'>;

/** A holder's units and declared run limit: its spec never changes while it holds its slot. */
interface HolderSpec {
  units: number;
  runMs?: number;
}

/** Holders' specs remembered (bounded: the memory is cleared when full). */
const MAX_REMEMBERED = 10_000;

/**
 * Backfill on a pool (shared/domain/backfill.ts, the rule). `waiters` reads the pool's head and the waiters behind it,
 * its holders (the holders index, then each holder's record once for its weight and run limit) and its counter, and
 * returns the waiters that may start now without delaying the head, in wait order, for the caller to let in (each
 * by its `startBy`) through the usual reserve (which still checks every counter's room: backfill never over-admits).
 *
 * Strict order (nothing) when: the gate is a keyed limit (the holders index lists a pool's holders only), no waiter
 * behind the head declares a run limit and fits the free units, or the pool has too many holders to read.
 */
export class Backfill {
  /** Holders' units and run limits: a spec never changes while its job holds a slot. */
  private readonly specs = new Map<string, HolderSpec>();

  constructor(private readonly deps: BackfillDeps) {}

  /** `seen`: the gate's counter as the caller read it, its head not fitting; `skip`: waiters the caller tried already. */
  async waiters(gate: string, seen: PoolSnapshot, skip: ReadonlySet<string>): Promise<BackfillPick[]> {
    if (isKeyGate(gate)) return [];
    const { deps } = this;
    const { leases, clock } = deps;
    const waiters = (await leases.oldestWaiters(gate, BACKFILL_LOOKAHEAD + skip.size)).filter((waiter) => !skip.has(waiter.waitKey));
    const waiting = waiters.map(candidateOf);
    const fits = (free: number) => waiting.slice(1).some((candidate) => candidate.runMs !== undefined && candidate.units <= free);
    if (!fits(seen.limit - seen.inUse)) return [];
    const holders = await allHolders(leases, gate);
    if (holders.length > BACKFILL_MAX_HOLDERS) return [];
    const specs = await inParallel(holders, READ_PARALLEL, (holder) => this.holderSpec(holder.jobId, holder.since));
    // The counter read after its holders: a holder that joined meanwhile (or that the index does not show yet) is in its
    // units in use and not listed, and is taken as one without an end-by; one that left is listed and counted free too.
    const snapshot = await leases.getPool(gate);
    if (!snapshot) return [];
    const free = snapshot.limit - snapshot.inUse;
    if (!fits(free)) return [];
    const holdings: Holding[] = [];
    holders.forEach((holder, i) => {
      const spec = specs[i];
      if (!spec) return; // no record: gone
      const endBy = endByOf(holder.since, spec.runMs);
      holdings.push({ units: spec.units, ...(endBy !== undefined && { endBy }) });
    });
    const unlisted = snapshot.inUse - holdings.reduce((sum, holding) => sum + holding.units, 0);
    if (unlisted > 0) holdings.push({ units: unlisted });
    const now = clock.now();
    const plan = planBackfill({ free, holdings, waiting, now, marginMs: BACKFILL_MARGIN_MS });
    if (plan.picks.length > 0)
      deps.log.debug('waiting jobs let in ahead of a heavier one that cannot start yet', {
        pool: gate,
        head: waiters[0]!.jobId,
        shadowInMs: plan.shadowAt! - now,
        jobIds: plan.picks.map((i) => waiters[i]!.jobId),
      });
    return plan.picks.map((i) => ({ waiter: waiters[i]!, startBy: plan.shadowAt! - waiting[i]!.runMs! }));
  }

  /** A holder's units and run limit, from its record (read once per slot it takes); undefined if it has none now. */
  private async holderSpec(jobId: string, since: number): Promise<HolderSpec | undefined> {
    const key = `${jobId}@${since}`;
    const known = this.specs.get(key);
    if (known) return known;
    const record = await this.deps.ledger.get(jobId);
    if (!record) return undefined;
    const runMs = runLimitMsOf(record.spec);
    const spec: HolderSpec = { units: record.spec.weight ?? 1, ...(runMs !== undefined && { runMs }) };
    if (this.specs.size >= MAX_REMEMBERED) this.specs.clear();
    this.specs.set(key, spec);
    return spec;
  }
}

function candidateOf(waiter: Waiter): BackfillCandidate {
  const runMs = runLimitOfBody(waiter.body);
  return { units: waiterDemand(waiter).units, ...(runMs !== undefined && { runMs }) };
}

/** The run limit of a waiter's spec (its body is the spec as JSON); none if the body cannot say. */
function runLimitOfBody(body: string): number | undefined {
  try {
    const spec = JSON.parse(body) as { runSeconds?: unknown };
    return typeof spec.runSeconds === 'number' && spec.runSeconds > 0 ? runLimitMsOf({ runSeconds: spec.runSeconds }) : undefined;
  } catch {
    return undefined;
  }
}
