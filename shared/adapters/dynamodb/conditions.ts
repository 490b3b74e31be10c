/** Every condition Sluice puts on a DynamoDB write, named for what it guards. */

/** Take a slot: the pool exists, this job holds none yet, and one is free. */
export const CAN_ACQUIRE = 'attribute_exists(pk) AND attribute_not_exists(holders.#job) AND inUse < #limit';

/** Free a slot: only one this job holds, so a repeated release changes nothing. */
export const HOLDS_SLOT = 'attribute_exists(holders.#job)';

/** Pass a slot on: the finished job holds it, the waiting job holds none, and the pool is not over its (lowered) limit. */
export const CAN_TRANSFER = 'attribute_exists(holders.#from) AND attribute_not_exists(holders.#to) AND inUse <= #limit';

/** Create an item only once. */
export const IS_NEW = 'attribute_not_exists(pk)';

/** Note an early completion only while its run is not recorded (a recorded run has a job id). */
export const RUN_NOT_RECORDED = 'attribute_not_exists(jobId)';

/** Ledger moves name their allowed source states; the state list is filled in per call. */
export const stateIn = (placeholders: string[]) => `#state IN (${placeholders.join(', ')})`;

/** A completion must be for the run the ledger recorded, or come before the acquirer recorded it (a job has one run). */
export const SAME_EXECUTION = '(attribute_not_exists(executionId) OR executionId = :executionId)';

/** Optimistic claim: nobody touched the record since it was read. */
export const UNCHANGED_SINCE = 'updatedAt = :seenUpdatedAt';
