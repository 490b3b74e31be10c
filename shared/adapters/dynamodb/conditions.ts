/** Every condition Sluice puts on a DynamoDB write, named for what it guards (docs/protocol.md). */

/** Create an item only once. */
export const IS_NEW = 'attribute_not_exists(pk)';

/** The fence: a job record is written only if it still has the version its writer read. */
export const SAME_VERSION = '#version = :version';

/** ... and holds no slot (taking one). */
export const SAME_VERSION_FREE = `${SAME_VERSION} AND attribute_not_exists(holderPool)`;

/** ... and holds a slot, of whichever pool (a finished job keeping it: no TTL yet). */
export const SAME_VERSION_LEASED = `${SAME_VERSION} AND attribute_exists(holderPool)`;

/** ... and holds a slot of this pool (keeping or giving it up). */
export const SAME_VERSION_HOLDING = `${SAME_VERSION} AND holderPool = :pool`;

/** ... and holds a slot of this pool that its counters count (giving it back moves them; an uncounted one would not). */
export const SAME_VERSION_HOLDING_COUNTED = `${SAME_VERSION_HOLDING} AND attribute_not_exists(leaseUncounted)`;

/** ... and holds a slot of this pool that no counter counts (an unlimited pool's: giving it back moves none). */
export const SAME_VERSION_HOLDING_UNCOUNTED = `${SAME_VERSION_HOLDING} AND leaseUncounted = :uncounted`;

/** ... holding a slot of this pool in `reserved` (claiming a reservation). */
export const SAME_VERSION_RESERVED = `${SAME_VERSION_HOLDING} AND #state = :reserved`;

/** A job that may be handed a slot: queued or waiting, holding none (no version: the releaser never read it). */
export const ADMITTABLE = '#state IN (:queued, :waiting) AND attribute_not_exists(holderPool)';

/**
 * A limit's counter (a pool or a keyed limit) keeps `room` = limit - inUse beside inUse, because a condition cannot
 * add: a job of weight w needs `room >= w`. Every change moves both by the same delta in one write.
 */

/** Take units (or hand a slot over): the gate exists and has room for the delta (room >= :delta). */
export const GATE_HAS_ROOM = 'attribute_exists(pk) AND room >= :delta';

/** Give units back: the gate exists (a free is never refused). */
export const GATE_EXISTS = 'attribute_exists(pk)';

/** Start a reservation: the gate is not over its (lowered) limit. */
export const GATE_WITHIN_LIMIT = 'attribute_exists(pk) AND room >= :zero';

/**
 * Take a reservation back: only while the gate is over its limit, or adopting (its pool's slots taken while it was
 * unlimited are not counted on it yet: it is taken for over its limit until they are).
 */
export const GATE_OVER_LIMIT = 'attribute_exists(pk) AND (room < :zero OR attribute_exists(adopting))';

/** An admission to a gate believed to have no start rate: it has none (a rate set since makes the write fail). */
export const NOT_RATED = 'attribute_not_exists(intervalMs)';

/** An admission booking a start on a rated gate: its `tat` is still the one read (a fence, like the version). */
export const RATE_AS_READ = 'tat = :tat';

/** Elect the sender of a gate's next tick: none is due at or before this one, unless it is past. */
export const TICK_NOT_DUE = 'attribute_exists(pk) AND (attribute_not_exists(tickAt) OR tickAt <= :now OR tickAt > :at)';

/** Set a limit on an existing gate (a new one is created with IS_NEW). */
export const GATE_KNOWN = 'attribute_exists(pk)';

/**
 * Switch a counter to an unlimited pool's: it exists and is not one already (not marked, and not at the limit no pool
 * reaches, as counters an earlier version made unlimited are). `:unlimitedLimit`: UNLIMITED_COUNTER_LIMIT.
 */
export const COUNTER_LIMITED = 'attribute_exists(pk) AND attribute_not_exists(unlimited) AND #limit < :unlimitedLimit';

/**
 * Switch an adopting counter to an unlimited pool's only once its adoption has settled (adoptionSettled in
 * shared/domain/unlimited.ts: begun at least the settle time before the caller's now, `:settledBefore`), or it carries
 * no time (made adopting before the time was written).
 */
export const ADOPTION_SETTLED =
  '(attribute_not_exists(adopting) OR attribute_not_exists(adoptingSince) OR adoptingSince <= :settledBefore)';

/** End the adoption the caller judged done (`:since`), not one a later switch began. */
export const ADOPTING_SINCE = 'adoptingSince = :since';

/** Switch a counter back to a limited pool's: it is an unlimited pool's (marked, or at the limit no pool reaches). */
export const COUNTER_UNLIMITED = 'attribute_exists(pk) AND (attribute_exists(unlimited) OR #limit >= :unlimitedLimit)';

/**
 * Admit onto a counter (take, hand over, reserve, claim): it is not adopting. An adopting counter does not count yet
 * the slots its pool's jobs took while the pool was unlimited, so its room is not the pool's (shared/domain/unlimited.ts,
 * `admitsOnCounter`).
 */
export const COUNTER_NOT_ADOPTING = 'attribute_not_exists(adopting)';

/**
 * Admit a job of a pool the configuration gives a limit onto its pool's counter: the counter is a limited pool's and
 * settled, neither still an unlimited pool's (marked, or at the limit no pool reaches: the deploy came before any
 * switch) nor adopting. `:unlimitedLimit`: UNLIMITED_COUNTER_LIMIT.
 */
export const COUNTER_SETTLED_LIMITED = `attribute_not_exists(unlimited) AND #limit < :unlimitedLimit AND ${COUNTER_NOT_ADOPTING}`;

/** Let a counter admit again once its pool's uncounted slots are counted on it: it is adopting. */
export const COUNTER_ADOPTING = 'attribute_exists(pk) AND attribute_exists(adopting)';

/**
 * Count an uncounted slot on its pool's counter (adopt): the record still holds an uncounted slot of the pool, at its
 * shard (`:shard`). No version: adopting changes neither the job's state nor anything a decision reads but the slot's
 * being counted, and every write giving a slot back requires the mark it finds (SAME_VERSION_HOLDING_COUNTED or
 * SAME_VERSION_HOLDING_UNCOUNTED), so one decided before it fails and reads again.
 */
export const HOLDING_UNCOUNTED_AT = 'holderPool = :shard AND leaseUncounted = :uncounted';

/** A pool's fair-share round only moves up. */
export const ROUND_BEHIND = 'attribute_exists(pk) AND (attribute_not_exists(round) OR round < :rank)';

/** A tenant's last round is raised to the pool's current one only if it is behind it (or it has none). */
export const TENANT_BEHIND = 'attribute_not_exists(lastRound) OR lastRound < :next';

/**
 * Forget a dead job (a redrive, after its cause was fixed): still at the version read, dead, holding no slot, and never
 * asked to start (no run can exist under its id). What the TTL does to it later anyway.
 */
export const DEAD_NEVER_STARTED = `${SAME_VERSION} AND #state = :dead AND attribute_not_exists(holderPool) AND (attribute_not_exists(startRequested) OR startRequested = :false)`;

/** A heartbeat: only to a job running this run (no version: the caller read nothing; the write still adds one). */
export const RUNNING_THIS_RUN = '#state = :running AND executionId = :executionId';

/** Note an early completion only while its run is not recorded (a recorded run has a job id). */
export const RUN_NOT_RECORDED = 'attribute_not_exists(jobId)';

/** Load a scheduled job (send it, then move it to queued): still at the version read, and still scheduled. */
export const SAME_VERSION_SCHEDULED = `${SAME_VERSION} AND #state = :scheduled`;

/** Cancel a job: still at the version read, holding no slot, and not started (scheduled, queued or waiting). */
export const CANCELLABLE = `${SAME_VERSION} AND attribute_not_exists(holderPool) AND #state IN (:scheduled, :queued, :waiting)`;

/** The loader's cursor only moves forward (two loaders at once may both move it). */
export const CURSOR_BEHIND = 'attribute_not_exists(#minute) OR #minute < :minute';
/** A job set's run exists (counting an ended job on it, noting a check). */
export const RUN_EXISTS = 'attribute_exists(pk)';

/**
 * Count an ended job on its run: the run exists, and its last count is not this job's (a job ends once: a count that
 * meets its own job's is the SDK's retry of one whose answer was lost, and already in).
 */
export const COUNT_NOT_REPEATED = `${RUN_EXISTS} AND (attribute_not_exists(lastCounted) OR lastCounted <> :job)`;

/** A job set's run exists and is not completed yet (completing it: once). */
export const RUN_OPEN = 'attribute_exists(pk) AND attribute_not_exists(completedAt)';
