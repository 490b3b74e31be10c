import type { RequestsPerJob } from './harness';
import type { ReconcilerResult } from './scenarios/reconciler';

/**
 * AWS list prices, us-east-1, as written in shared/aws-facts.md (third-party pages dated 2025-2026; not re-checked
 * against AWS for this benchmark: check before quoting).
 */
export const PRICES = {
  dated: '2025-2026 (us-east-1 list prices as recorded in shared/aws-facts.md; check before quoting)',
  sqsPerMillionRequests: 0.4,
  lambdaPerMillionRequests: 0.2,
  lambdaArmPerGbSecond: 0.0000133334,
  dynamodbPerMillionWriteUnits: 0.625,
  dynamodbPerMillionReadUnits: 0.125,
  /** AWS service events (AppFlow, Glue) on the default bus. */
  eventBridgeServiceEvents: 0,
  /** Sluice's own events (PutEvents, under 64 KB each): custom events, https://aws.amazon.com/eventbridge/pricing/ */
  eventBridgeCustomPerMillionEvents: 1.0,
  stepFunctionsPerThousandTransitions: 0.025,
} as const;

export interface CostAssumptions {
  /** Billed duration of one invocation, ms (I/O-bound handlers; Lambda bills per ms). */
  invocationMs: number;
  /** serverless.yml provider.memorySize. */
  memoryMb: number;
  /** Typical run time of a real job (the reconciler checks each running job once per period). */
  jobMinutes: number;
  reconcilePeriodMinutes: number;
  /** Slots of the one pool the reconciler's fixed cost is shared by. */
  limit: number;
  /**
   * Units per plain write and per read: items under 1 KB and reads under 4 KB (Sluice's items are). Writes are costed
   * by their units, RequestsPerJob.dynamodbWriteUnits, which counts a plain write as this one unit and each item of a
   * transaction as two.
   */
  unitsPerWrite: number;
  unitsPerRead: number;
  /** The producer's SendMessageBatch of 10: 0.1 request per job (same for any queue-fed design). */
  producerSqsPerJob: number;
}

export interface CostBreakdown {
  sqs: number;
  lambdaRequests: number;
  lambdaDuration: number;
  dynamodbWrites: number;
  dynamodbReads: number;
  reconciler: number;
  eventBridge: number;
  total: number;
}

const cents = (x: number) => Math.round(x * 100) / 100;

/** Dollars per million jobs: requests per job (the path, at the largest backlog) plus the reconciler's share. */
export function costPerMillionJobs(perJob: RequestsPerJob, reconcilerRun: ReconcilerResult | undefined, a: CostAssumptions): CostBreakdown {
  const gbSecondsPerInvocation = (a.invocationMs / 1000) * (a.memoryMb / 1024);
  const sqs = (perJob.sqs + a.producerSqsPerJob) * PRICES.sqsPerMillionRequests;
  const lambdaRequests = perJob.lambda * PRICES.lambdaPerMillionRequests;
  const lambdaDuration = perJob.lambda * 1e6 * gbSecondsPerInvocation * PRICES.lambdaArmPerGbSecond;
  const dynamodbWrites = perJob.dynamodbWriteUnits * PRICES.dynamodbPerMillionWriteUnits;
  const dynamodbReads = perJob.dynamodbReads * a.unitsPerRead * PRICES.dynamodbPerMillionReadUnits;
  const reconciler = reconcilerPerMillion(reconcilerRun, a);
  return finish({
    sqs,
    lambdaRequests,
    lambdaDuration,
    dynamodbWrites,
    dynamodbReads,
    reconciler,
    eventBridge: PRICES.eventBridgeServiceEvents + perJob.events * PRICES.eventBridgeCustomPerMillionEvents,
  });
}

/**
 * The reconciler per job: every period it reads each running job's ledger record and asks the job API (free), and
 * per pool it reads the pool item; one invocation. A job of `jobMinutes` is checked jobMinutes / period times; the
 * per-pool and per-invocation part is shared by the `limit` jobs running in the pool.
 */
export function reconcilerPerMillion(r: ReconcilerResult | undefined, a: CostAssumptions): number {
  if (!r) return 0;
  const checks = a.jobMinutes / a.reconcilePeriodMinutes;
  const gbSeconds = (a.invocationMs / 1000) * (a.memoryMb / 1024);
  const pools = Math.max(1, r.pools);
  // Per run with no holders: one listPools query + per-pool reads; count one pool's share.
  const fixedReads = (r.withoutHolders.dynamodbReads - 1) / pools + 1;
  const fixedWrites = r.withoutHolders.dynamodbWriteUnits / pools;
  const perRunShared =
    (fixedReads * a.unitsPerRead * PRICES.dynamodbPerMillionReadUnits + fixedWrites * PRICES.dynamodbPerMillionWriteUnits) / 1e6 +
    PRICES.lambdaPerMillionRequests / 1e6 +
    gbSeconds * PRICES.lambdaArmPerGbSecond;
  const perHolder =
    (r.perHolder.dynamodbReads * a.unitsPerRead * PRICES.dynamodbPerMillionReadUnits +
      r.perHolder.dynamodbWriteUnits * PRICES.dynamodbPerMillionWriteUnits) /
    1e6;
  return checks * (perHolder + perRunShared / Math.max(1, a.limit)) * 1e6;
}

function finish(parts: Omit<CostBreakdown, 'total'>): CostBreakdown {
  const rounded = Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, cents(v)])) as Omit<CostBreakdown, 'total'>;
  return { ...rounded, total: cents(Object.values(parts).reduce((s, v) => s + v, 0)) };
}

/** The Step Functions polling design, from shared/aws-facts.md: about 17.5 transitions per 20-minute job with 5-minute polls. */
export const STEP_FUNCTIONS_TRANSITIONS_PER_JOB = 17.5;
export const stepFunctionsPerMillion = () => cents(STEP_FUNCTIONS_TRANSITIONS_PER_JOB * 1000 * PRICES.stepFunctionsPerThousandTransitions);
