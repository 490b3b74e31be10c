/**
 * One table holds everything, keyed by (pk, sk):
 * - a limit:           pk POOL#<gate>        sk POOL              limit, inUse, room (the slots are leases on job records);
 *                                                                a gate is a pool's name or `key/<key>` (a keyed limit)
 * - a waiting job:     pk POOL#<gate>        sk WAIT#<waitKey>    body, jobId, since, pool, keys, units
 * - a race mark:       pk POOL#<gate>        sk WAIT!RACE         at (a release of the gate lost a hand-off race then);
 *                                                                sorts just before the waiters, outside their WAIT# prefix
 * - a tenant's round:  pk POOL#<pool>        sk TENANT#<key>      lastRound (fairness)
 * - the gate registry: pk POOLS              sk <gate>            (so the reconciler can list gates without a scan)
 * - uncounted pools:   pk UNCOUNTED          sk <pool>            (pools whose slots may be uncounted: an unlimited pool's, now or ever)
 * - a job (ledger):    pk JOB#<jobId>        sk JOB               state, version, spec, lease (holderPool), timestamps, run
 * - a run:             pk RUN#<kind>#<id>    sk RUN               jobId, pool (a completion event's way back to its job)
 * - the loader cursor:  pk LOADER             sk CURSOR            minute (the first minute of the due index not loaded in full)
 * A scheduled job due beyond 15 minutes also carries dueBucket and dueSk: the keys of the sparse `due` index.
 * A job in a terminal state carries endedBucket and endedSk: the keys of the sparse `ended` index (domain/endedIndex.ts).
 * - a job set:         pk SET#<set>          sk SET               paused
 * - a job set's run:   pk SET#<set>          sk RUN#<run>         total, keys, ended, startedAt, completedAt, summary
 * - an open set run:   pk SETRUNS            sk <set>#<run>       (while the run is open: the reconciler checks them)
 * Waiters share the pool's partition so the oldest are one Query away, ordered by sort key.
 */
export const POOL_SK = 'POOL';
export const JOB_SK = 'JOB';
export const RUN_SK = 'RUN';
export const POOL_REGISTRY_PK = 'POOLS';
export const WAIT_PREFIX = 'WAIT#';
export const TENANT_PREFIX = 'TENANT#';
/** The race mark's sort key: before every `WAIT#` key ('!' < '#'), so a release's query reads it with the head of the list. */
export const RACE_MARK_SK = 'WAIT!RACE';
/** A sort key past every `WAIT#` key ('$' follows '#') and no item's: the end of a release's query range. */
export const WAITING_LIST_END = 'WAIT$';

export const poolKey = (pool: string) => ({ pk: `POOL#${pool}`, sk: POOL_SK });
export const waiterKey = (pool: string, waitKey: string) => ({ pk: `POOL#${pool}`, sk: `${WAIT_PREFIX}${waitKey}` });
export const poolRegistryKey = (pool: string) => ({ pk: POOL_REGISTRY_PK, sk: pool });
export const UNCOUNTED_POOLS_PK = 'UNCOUNTED';
export const uncountedPoolKey = (pool: string) => ({ pk: UNCOUNTED_POOLS_PK, sk: pool });
export const jobKey = (jobId: string) => ({ pk: `JOB#${jobId}`, sk: JOB_SK });
export const runKey = (kind: string, executionId: string) => ({ pk: `RUN#${kind}#${executionId}`, sk: RUN_SK });
export const raceMarkKey = (gate: string) => ({ pk: `POOL#${gate}`, sk: RACE_MARK_SK });
export const tenantKey = (pool: string, tenant: string) => ({ pk: `POOL#${pool}`, sk: `${TENANT_PREFIX}${tenant}` });
export const loaderCursorKey = () => ({ pk: 'LOADER', sk: 'CURSOR' });
export const SET_SK = 'SET';
export const SET_RUN_PREFIX = 'RUN#';
export const OPEN_SET_RUNS_PK = 'SETRUNS';
export const setKey = (set: string) => ({ pk: `SET#${set}`, sk: SET_SK });
export const setRunKey = (set: string, run: string) => ({ pk: `SET#${set}`, sk: `${SET_RUN_PREFIX}${run}` });
export const openSetRunKey = (set: string, run: string) => ({ pk: OPEN_SET_RUNS_PK, sk: `${set}#${run}` });
