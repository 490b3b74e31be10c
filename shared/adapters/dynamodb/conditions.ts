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

/** ... holding a slot of this pool in `reserved` (claiming a reservation). */
export const SAME_VERSION_RESERVED = `${SAME_VERSION_HOLDING} AND #state = :reserved`;

/** A job that may be handed a slot: queued or waiting, holding none (no version: the releaser never read it). */
export const ADMITTABLE = '#state IN (:queued, :waiting) AND attribute_not_exists(holderPool)';

/** Take a slot: the pool exists and one is free. */
export const POOL_HAS_ROOM = 'attribute_exists(pk) AND inUse < #limit';

/** Pass a slot on or start a reservation: the pool is not over its (lowered) limit. */
export const POOL_WITHIN_LIMIT = 'attribute_exists(pk) AND inUse <= #limit';

/** Take a reservation back: only while the pool is over its limit. */
export const POOL_OVER_LIMIT = 'attribute_exists(pk) AND inUse > #limit';

/** Note an early completion only while its run is not recorded (a recorded run has a job id). */
export const RUN_NOT_RECORDED = 'attribute_not_exists(jobId)';
