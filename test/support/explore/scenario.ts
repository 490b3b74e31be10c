import fc from 'fast-check';
import { DynamoFault } from '../../../local/faults/dynamoFaults';
import type { RunOutcome } from '../../../shared/domain/job';
import type { JobKind } from '../../../shared/kinds/registry';

/**
 * A scenario: pools (limits 1-2), jobs (AppFlow-like idempotent starts, Glue-like ones), their first messages (one or two
 * copies each), then waves of concurrent invocations. The clock moves only between waves (an invocation never outlives
 * the grace periods: Lambda's timeout is shorter), never while one is in flight. Inside a wave the scheduler decides when
 * each invocation begins and when each of its port calls is answered.
 */

/** A fault of a start call (the job API's answer), mapped to Sluice's errors by the adapters' own classifyStartError. */
export type StartFault =
  /** ThrottlingException (HTTP 400): a refusal, nothing started */
  | { t: 'throttle' }
  /** InternalServiceException / InternalServerException (HTTP 500): the service may have started the run or not */
  | { t: '5xx'; started: boolean }
  /** no answer at all (a network failure, no HTTP status): the run may have started or not */
  | { t: 'no-answer'; started: boolean }
  /** EntityNotFoundException / ResourceNotFoundException: the job can never run */
  | { t: 'refused' };

/**
 * A fault of the `at`-th port call of an invocation (counting every port, 1-based; on the DynamoDB engine every
 * DynamoDB request counts too, each attempt of it).
 */
export interface CallFault {
  /**
   * lost: the call's write applied, its answer was lost (the call throws). retried: the call's write applied, its
   * answer was lost, and the SDK sent it again: the caller gets the answer of that second call, which meets the first
   * one's effect (a conditional write: "condition failed" for a write that did happen). crash-*: the invocation dies there.
   * contended: from that call on, the invocation's admissions lose every race for a counter (other acquirers booking
   * the same start rate, transactions on the same counter: a burst): in memory the store answers Contended; on DynamoDB
   * another writer books a start on each rated counter just before each write to it, and a write to an unrated counter
   * meets a transaction (TransactionConflict). dynamo: that DynamoDB request is answered with DYNAMO_CALL_FAULTS[kind].
   * stall: a stale writer (STALL below): the invocation's `at`-th write to a job record (a DynamoDB write request that
   * touches one; in memory a lease store or ledger call that writes one) is held, not sent, until every other
   * invocation of the moment has done its work (`long`: for as long as its function's timeout allows), then sent,
   * decided on what it read before.
   */
  t: 'lost' | 'retried' | 'crash-before' | 'crash-after' | 'contended' | 'dynamo' | 'stall';
  at: number;
  /** dynamo: which of DYNAMO_CALL_FAULTS */
  kind?: number;
  /** stall: held through later waves and the end phase, until the clock would pass its function's timeout */
  long?: boolean;
}

/**
 * A stall makes a stale writer, as AWS makes them: an invocation reads (or writes) a job, then goes slow, and sends its
 * next write only after other invocations moved the job on, deciding on what it read before (a read sent late is only a
 * fresh read: stalls hold writes, to job records, which the version fences). Nothing bounds how slow one invocation is beside another within its function's timeout:
 * - SQS delivers a message at least once: "more than one copy of a message might be delivered", "you might get that
 *   message copy again" (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/standard-queues.html,
 *   https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/standard-queues-at-least-once-delivery.html):
 *   two acquirers on one job, one of them behind the other;
 * - Lambda retries an asynchronous invocation that failed (timeouts included) and may deliver one event more than once
 *   "because the queue itself is eventually consistent"
 *   (https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html): releasers of one run's event,
 *   one acting on a record read before the other released it;
 * - the SDK sends a request again after a throttle or a 5xx, after an exponential backoff with jitter
 *   (https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html): the write goes out seconds after
 *   the read it was decided on;
 * - a function runs until its timeout (https://docs.aws.amazon.com/lambda/latest/dg/configuration-timeout.html:
 *   serverless.yml gives the acquirer and releaser 30 s, the reconciler 120 s): a long stall lasts into later waves (and
 *   the end phase) only while their clock moves keep the invocation within its timeout; it is let go before the clock
 *   moves past it.
 */
export const STALL_WRITES_MAX = 3;

/** What a `dynamo` fault answers a request with (local/faults/dynamoFaults.ts). */
export const DYNAMO_CALL_FAULTS = [
  DynamoFault.Throttle,
  DynamoFault.ServerError,
  DynamoFault.ServerErrorApplied,
  DynamoFault.Conflict,
  DynamoFault.TransactionThrottled,
] as const;

export interface Faults {
  call?: CallFault;
  /** applies to the invocation's first start call */
  start?: StartFault;
}

export type Step =
  /** an acquirer receives the `pick`-th visible message (nothing if none is visible) */
  | { t: 'deliver'; pick: number; faults: Faults }
  /** an acquirer receives a second copy of a message already received or still visible (SQS is at least once) */
  | { t: 'duplicate'; pick: number; faults: Faults }
  /** the releaser gets the `pick`-th completion event on the bus */
  | { t: 'event'; pick: number; faults: Faults }
  /** the job API ends the `pick`-th run in progress; its event is delivered on time, twice, late (next wave) or never */
  | { t: 'endRun'; pick: number; outcome: RunOutcome; fate: 'event' | 'twice' | 'late' | 'lost' }
  | { t: 'reconcile'; faults: Faults }
  /** an operator sets a pool's limit: lowers it, raises it, pauses it (0) */
  | { t: 'setLimit'; pool: number; limit: number; faults: Faults };

export interface Wave {
  /** ms the clock moves before the wave */
  advanceMs: number;
  steps: Step[];
}

export interface JobDef {
  kind: JobKind;
  /** index into the scenario's pools */
  pool: number;
  /** messages sent for the job at the start: 2 = the client sent it twice */
  copies: number;
  /**
   * flow control: indexes into the scenario's keyed limits, the job's weight, priority, tenant (fairness key) and
   * declared run limit (runSeconds: it may backfill; the explored runs do not keep to it)
   */
  keys?: number[];
  weight?: number;
  priority?: number;
  tenant?: number;
  runSeconds?: number;
}

export interface Scenario {
  limits: number[];
  /** every pool has a start rate (RATED_POOL_INTERVAL_MS) */
  ratedPools?: boolean;
  /**
   * The last pool is configured "unlimited" (POOLS): its jobs take no counter, unless they name keyed limits or the
   * pools are rated (then its counter is created with a limit never reached). `limits` keeps a number for it, unused.
   */
  unlimitedPool?: boolean;
  /** keyed limits (their default maximum, by prefix): `k<i+1>:x` */
  keyLimits?: number[];
  /**
   * How many store calls the holders index lags behind (in memory: DynamoDB's global secondary indexes are eventually
   * consistent); caught up when the end moves the clock past every grace period. Absent: HOLDERS_INDEX_LAG_CALLS.
   */
  indexLagCalls?: number;
  jobs: JobDef[];
  waves: Wave[];
}

export type FaultName = 'throttle' | '5xx' | 'no-answer' | 'refused' | 'lost' | 'crash' | 'contended' | 'dynamo' | 'stall';
/** Every fault kind, both engines ('dynamo' faults only DynamoDB requests: it does nothing in memory). */
export const ALL_FAULTS: readonly FaultName[] = [
  'throttle',
  '5xx',
  'no-answer',
  'refused',
  'lost',
  'crash',
  'contended',
  'dynamo',
  'stall',
];

export interface ScenarioOptions {
  /** fault kinds the generator may choose (default: all) */
  faults?: readonly FaultName[];
  /** operators change limits (default true) */
  limitChanges?: boolean;
  /** weight of setLimit steps (default 1, against 8 for a delivery) */
  limitWeight?: number;
  /** job kinds (default both) */
  kinds?: readonly JobKind[];
  maxJobs?: number;
  maxWaves?: number;
  maxSteps?: number;
  /** jobs name keyed limits, have weights, priorities and fairness keys (default false) */
  flowControl?: boolean;
  /** every pool has a start rate of RATED_POOL_INTERVAL_MS between starts (a busy rate: bookings race) */
  ratedPools?: boolean;
  /** an invocation has a call fault one time in 1 + this (default 5) */
  callFaultRarity?: number;
}

export const poolName = (index: number): string => `p${index + 1}`;
/** The scenario's unlimited pool (its last), if it has one. */
export const unlimitedPoolOf = (scenario: Pick<Scenario, 'limits' | 'unlimitedPool'>): string | undefined =>
  scenario.unlimitedPool ? poolName(scenario.limits.length - 1) : undefined;
export const keyName = (index: number): string => `k${index + 1}:x`;
/** With flow control, the second keyed limit has a start rate: one start per RATED_INTERVAL_MS. */
export const RATED_INTERVAL_MS = 10_000;
/** With ratedPools, each pool's start rate: 100 starts a second, so a burst's bookings all fall within the horizon. */
export const RATED_POOL_INTERVAL_MS = 10;
/** The gates a setLimit step may change: the pools, then the keyed limits. */
export const gateNames = (scenario: Pick<Scenario, 'limits' | 'keyLimits'>): string[] => [
  ...scenario.limits.map((_, i) => poolName(i)),
  ...(scenario.keyLimits ?? []).map((_, i) => `key/${keyName(i)}`),
];
export const jobName = (index: number): string => `j${index + 1}`;

/** Times between waves: a retry's backoff, past the start grace (90 s), the reservation grace (120 s), SQS's visibility timeout (180 s). */
const ADVANCES = [0, 0, 3_000, 10_000, 95_000, 130_000, 200_000];

/** `arb` one time in `1 + rarity`, otherwise undefined; shrinks towards undefined (no fault). */
function sometimes<T>(arb: fc.Arbitrary<T>, rarity: number): fc.Arbitrary<T | undefined> {
  return fc.oneof({ withCrossShrink: true }, { arbitrary: fc.constant(undefined), weight: rarity }, { arbitrary: arb, weight: 1 });
}

function faultsOf(allowed: ReadonlySet<FaultName>, withStart: boolean, callFaultRarity = 5): fc.Arbitrary<Faults> {
  const callKinds = [
    ...(allowed.has('lost') ? (['lost', 'retried'] as const) : []),
    ...(allowed.has('crash') ? (['crash-before', 'crash-after'] as const) : []),
    ...(allowed.has('contended') ? (['contended'] as const) : []),
    ...(allowed.has('dynamo') ? (['dynamo', 'dynamo'] as const) : []),
    ...(allowed.has('stall') ? (['stall', 'stall'] as const) : []),
  ];
  const startArbs: fc.Arbitrary<StartFault>[] = [];
  if (allowed.has('throttle')) startArbs.push(fc.constant({ t: 'throttle' as const }));
  if (allowed.has('5xx')) startArbs.push(fc.record({ t: fc.constant('5xx' as const), started: fc.boolean() }));
  if (allowed.has('no-answer')) startArbs.push(fc.record({ t: fc.constant('no-answer' as const), started: fc.boolean() }));
  if (allowed.has('refused')) startArbs.push(fc.constant({ t: 'refused' as const }));
  const call =
    callKinds.length === 0
      ? fc.constant(undefined)
      : sometimes(
          fc
            .record({
              t: fc.constantFrom(...callKinds),
              at: fc.integer({ min: 1, max: 10 }),
              kind: fc.nat(DYNAMO_CALL_FAULTS.length - 1),
              long: fc.constantFrom(false, true, true),
            })
            .map(({ kind, long, ...fault }) =>
              fault.t === 'dynamo'
                ? { ...fault, kind }
                : fault.t === 'stall'
                  ? { ...fault, at: 1 + ((fault.at - 1) % STALL_WRITES_MAX), ...(long && { long }) }
                  : fault,
            ),
          callFaultRarity,
        );
  const start = !withStart || startArbs.length === 0 ? fc.constant(undefined) : sometimes(fc.oneof(...startArbs), 2);
  return fc.record({ call, start }).map(({ call, start }) => ({ ...(call && { call }), ...(start && { start }) }));
}

export function stepArb(options: ScenarioOptions = {}): fc.Arbitrary<Step> {
  const allowed = new Set(options.faults ?? ALL_FAULTS);
  const faultsArb = (withStart: boolean) => faultsOf(allowed, withStart, options.callFaultRarity);
  const pick = fc.nat(7);
  const arbs: Array<{ arbitrary: fc.Arbitrary<Step>; weight: number }> = [
    { weight: 8, arbitrary: fc.record({ t: fc.constant('deliver' as const), pick, faults: faultsArb(true) }) },
    { weight: 3, arbitrary: fc.record({ t: fc.constant('duplicate' as const), pick, faults: faultsArb(true) }) },
    { weight: 3, arbitrary: fc.record({ t: fc.constant('event' as const), pick, faults: faultsArb(false) }) },
    {
      weight: 3,
      arbitrary: fc.record({
        t: fc.constant('endRun' as const),
        pick,
        outcome: fc.constantFrom<RunOutcome>('succeeded', 'failed'),
        fate: fc.constantFrom('event' as const, 'event' as const, 'twice' as const, 'late' as const, 'lost' as const),
      }),
    },
    { weight: 1, arbitrary: fc.record({ t: fc.constant('reconcile' as const), faults: faultsArb(false) }) },
  ];
  if (options.limitChanges ?? true) {
    arbs.push({
      weight: options.limitWeight ?? 1,
      arbitrary: fc.record({
        t: fc.constant('setLimit' as const),
        pool: fc.nat(3),
        limit: fc.integer({ min: 0, max: 3 }),
        faults: faultsArb(false),
      }),
    });
  }
  return fc.oneof(...arbs);
}

export function scenarioArb(options: ScenarioOptions = {}): fc.Arbitrary<Scenario> {
  const kinds = options.kinds ?? (['appflow', 'glue'] as const);
  const wave = fc.record({
    advanceMs: fc.constantFrom(...ADVANCES),
    steps: fc.array(stepArb(options), { minLength: 1, maxLength: options.maxSteps ?? 6 }),
  });
  const plain = { kind: fc.constantFrom(...kinds), pool: fc.nat(1), copies: fc.integer({ min: 1, max: 2 }) };
  const job = options.flowControl
    ? fc.record({
        ...plain,
        keys: fc.subarray([0, 1]),
        weight: fc.integer({ min: 1, max: 2 }),
        priority: fc.integer({ min: 0, max: 2 }),
        tenant: fc.nat(1),
        runSeconds: fc.option(fc.constantFrom(1, 60), { nil: undefined }),
      })
    : fc.record(plain);
  return fc.record({
    ...(options.ratedPools && { ratedPools: fc.constant(true) }),
    limits: fc.array(fc.integer({ min: 1, max: options.flowControl ? 3 : 2 }), { minLength: 1, maxLength: 2 }),
    // One scenario in three has an unlimited pool beside (or instead of) a limited one.
    unlimitedPool: fc.constantFrom(false, false, true),
    ...(options.flowControl && { keyLimits: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 2, maxLength: 2 }) }),
    // A consistent index, one a step behind, or one that misses most of a run's slot changes.
    indexLagCalls: fc.constantFrom(0, 2, 12),
    jobs: fc.array(job, { minLength: 1, maxLength: options.maxJobs ?? 4 }),
    waves: fc.array(wave, { minLength: 1, maxLength: options.maxWaves ?? 4 }),
  });
}

// ---- readable forms ------------------------------------------------------------------------------------------------

export function describeFaults(faults: Faults): string {
  const parts: string[] = [];
  if (faults.start) {
    const f = faults.start;
    parts.push(`start ${f.t}${'started' in f ? (f.started ? ' (run started)' : ' (nothing started)') : ''}`);
  }
  if (faults.call) {
    const { t, at, kind } = faults.call;
    parts.push(
      t === 'dynamo'
        ? `dynamo ${DYNAMO_CALL_FAULTS[kind ?? 0]} at call ${at}`
        : t === 'contended'
          ? `contended from call ${at}`
          : t === 'stall'
            ? `stalls at job write ${at} ${stallSpan(faults.call)}`
            : `${t} at call ${at}`,
    );
  }
  return parts.length ? ` [${parts.join('; ')}]` : '';
}

/** How long a stall holds its write. */
export function stallSpan(fault: CallFault): string {
  return fault.long ? 'for as long as its timeout allows' : 'until the rest of its wave is done';
}

export function describeStep(step: Step, scenario: Pick<Scenario, 'limits' | 'keyLimits'>): string {
  switch (step.t) {
    case 'deliver':
      return `deliver visible message #${step.pick}${describeFaults(step.faults)}`;
    case 'duplicate':
      return `duplicate of message #${step.pick}${describeFaults(step.faults)}`;
    case 'event':
      return `releaser gets event #${step.pick}${describeFaults(step.faults)}`;
    case 'endRun':
      return `run #${step.pick} ends ${step.outcome}, event ${step.fate}`;
    case 'reconcile':
      return `reconciler${describeFaults(step.faults)}`;
    case 'setLimit':
      return `setLimit ${setLimitGate(step.pool, scenario)} ${step.limit}${describeFaults(step.faults)}`;
  }
}

/** The gate a setLimit step changes: a pool, or (with keyed limits) a keyed limit. */
export function setLimitGate(index: number, scenario: Pick<Scenario, 'limits' | 'keyLimits'>): string {
  const gates = scenario.keyLimits ? gateNames(scenario) : scenario.limits.map((_, i) => poolName(i));
  return gates[index % gates.length]!;
}

function describeFlowControl(job: JobDef): string {
  const parts = [
    ...(job.keys?.length ? [`limits ${job.keys.map(keyName).join('+')}`] : []),
    ...(job.weight !== undefined && job.weight > 1 ? [`weight ${job.weight}`] : []),
    ...(job.priority ? [`priority ${job.priority}`] : []),
    ...(job.tenant !== undefined ? [`tenant t${job.tenant}`] : []),
    ...(job.runSeconds !== undefined ? [`runSeconds ${job.runSeconds}`] : []),
  ];
  return parts.length ? ` (${parts.join(', ')})` : '';
}

export function describeScenario(scenario: Scenario): string {
  const lines = [
    `pools: ${scenario.limits.map((limit, i) => `${poolName(i)}=${unlimitedPoolOf(scenario) === poolName(i) ? 'unlimited' : limit}`).join(', ')}${scenario.ratedPools ? ` (each ${1000 / RATED_POOL_INTERVAL_MS} starts/s)` : ''}`,
    ...(scenario.keyLimits ? [`keyed limits: ${scenario.keyLimits.map((limit, i) => `${keyName(i)}=${limit}`).join(', ')}`] : []),
    ...(scenario.indexLagCalls ? [`holders index ${scenario.indexLagCalls} store calls behind (in memory)`] : []),
    `jobs: ${scenario.jobs
      .map(
        (job, i) =>
          `${jobName(i)} ${job.kind} in ${poolName(job.pool % scenario.limits.length)}${describeFlowControl(job)}${job.copies > 1 ? ` x${job.copies}` : ''}`,
      )
      .join(', ')}`,
  ];
  scenario.waves.forEach((wave, i) => {
    lines.push(`wave ${i + 1} (clock +${wave.advanceMs / 1000} s):`);
    for (const step of wave.steps) lines.push(`  - ${describeStep(step, scenario)}`);
  });
  return lines.join('\n');
}
