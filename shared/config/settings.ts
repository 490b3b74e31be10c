import * as z from 'zod';
import { HandOffStart, type SluiceSettings } from '../app/deps';
import { MAX_POOL_LIMIT } from '../domain/pool';
import { UNLIMITED } from '../domain/unlimited';
import { parseRate } from '../domain/rate';
import { SQS_MAX_DELAY_SECONDS } from '../domain/backoff';
import { ConfigurationError, RetryWindowTooLongError } from '../errors';
import type { OverridePolicy } from '../domain/overridePolicy';
import { describeIssues } from '../domain/zodIssues';
import { type JobKind, KINDS } from '../kinds/registry';

/** The variable holding a kind's maximum run time in seconds: MAX_RUN_SECONDS_APPFLOW, MAX_RUN_SECONDS_SFN, ... */
export const maxRunSecondsEnv = (kind: string): string => `MAX_RUN_SECONDS_${kind.toUpperCase()}`;

/** An unset or empty variable takes the default (an empty string would otherwise coerce to 0). */
const blankAsUnset = (value: unknown) => (typeof value === 'string' && value.trim() === '' ? undefined : value);
const seconds = (fallback: number) => z.preprocess(blankAsUnset, z.coerce.number().nonnegative().default(fallback));

/** Everything the functions read from their environment (set in serverless.yml), with documented defaults. */
const EnvSchema = z.object({
  TABLE_NAME: z.string().min(1),
  QUEUE_URL: z.string().min(1),
  DLQ_URL: z.string().min(1),
  /**
   * JSON map of pool name to its initial limit (limits then live in the table and change at run time), or to
   * "unlimited": a pool with no concurrency limit, whose jobs take no counter (shared/domain/unlimited.ts).
   */
  POOLS: z.string().default('{"default":8}'),
  /** JSON map of keyed-limit prefix ("org" for "org:acme") to the maximum a key gets when a job first names it. */
  KEY_LIMITS: z.preprocess(blankAsUnset, z.string().default('{}')),
  /** JSON map of a pool (or `key/<key>`, or a key prefix `key/<prefix>:*`) to its start rate ("2/s", "30/m"), set when it is created. */
  RATES: z.preprocess(blankAsUnset, z.string().default('{}')),
  /** JSON: what a job may override of what its kind runs, per kind and setting (shared/domain/overridePolicy.ts); none by default. */
  OVERRIDES: z.preprocess(blankAsUnset, z.string().default('{}')),
  START_GRACE_SECONDS: seconds(90),
  RESERVATION_GRACE_SECONDS: seconds(120),
  /** MAX_RUN_SECONDS_<KIND> of every kind (maxRunSecondsEnv), with the kind's default. */
  ...Object.fromEntries(KINDS.map((k) => [maxRunSecondsEnv(k.kind), seconds(k.maxRunSeconds)])),
  STOP_OVERDUE_RUNS: z.enum(['true', 'false']).default('false'),
  RETRY_BASE_SECONDS: seconds(2),
  RETRY_MAX_SECONDS: seconds(900),
  /** How long a job refused for capacity keeps retrying after its first start call before it is dead-lettered. */
  RETRY_FOR_SECONDS: seconds(6 * 3600),
  /** The reconciler's time budget per run (its Lambda timeout is 120 s) and how many holders it checks at once. */
  RECONCILE_BUDGET_SECONDS: seconds(90),
  /**
   * How long after a pool's counter began adopting (a pool limited again) every invocation on the configuration before
   * the deploy has ended: the acquirer's timeout plus a margin for the deploy (shared/domain/unlimited.ts, adoptionSettled).
   */
  ADOPT_SETTLE_SECONDS: seconds(330),
  RECONCILE_CONCURRENCY: z.preprocess(blankAsUnset, z.coerce.number().int().min(1).max(100).default(16)),
  /** Who starts a job handed a released slot: the releaser (one hop, the default) or the acquirer by a wake-up message. */
  HAND_OFF_START: z.preprocess(blankAsUnset, z.enum([HandOffStart.Releaser, HandOffStart.Queue]).default(HandOffStart.Releaser)),
  LEDGER_RETENTION_DAYS: z.preprocess(blankAsUnset, z.coerce.number().positive().default(30)),
  /** The `service` of every log line and metric: `sluice-<stage>` (serverless.yml), so stages never mix metrics. */
  POWERTOOLS_SERVICE_NAME: z.preprocess(blankAsUnset, z.string().default('sluice')),
  /** The job sets file, relative to the function's root (its copy is packaged with the jobSets function). */
  JOB_SETS_FILE: z.preprocess(blankAsUnset, z.string().default('shared/config/jobSets.yml')),
  /** The bus Sluice's own events go to (a job set run completed). */
  EVENT_BUS_NAME: z.preprocess(blankAsUnset, z.string().default('default')),
  /** The CloudWatch namespace of the metrics (the alarms and the dashboard read it too). */
  POWERTOOLS_METRICS_NAMESPACE: z.preprocess(blankAsUnset, z.string().default('Sluice')),
});

export type SluiceEnv = z.infer<typeof EnvSchema>;

/** A kind's MAX_RUN_SECONDS_<KIND> as read (its default when unset). */
export const maxRunSecondsOf = (env: SluiceEnv, kind: string): number =>
  (env as unknown as Record<string, number>)[maxRunSecondsEnv(kind)]!;

const PoolsSchema = z.record(z.string().min(1), z.number().int().min(0).max(MAX_POOL_LIMIT));

export function readEnv(env: NodeJS.ProcessEnv = process.env): SluiceEnv {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    throw new ConfigurationError(`bad configuration: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}

/** The stage's pools: the limited ones with their initial limit, and the ones configured "unlimited". */
export interface PoolSetting {
  limits: Record<string, number>;
  unlimited: string[];
}

const PoolSettingSchema = z.record(z.string().min(1), z.union([z.number().int().min(0).max(MAX_POOL_LIMIT), z.literal(UNLIMITED)]));

/** POOLS: each pool's initial limit (0..MAX_POOL_LIMIT) or "unlimited"; anything else is refused, naming the pool. */
export function parsePoolSetting(json: string): PoolSetting {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new ConfigurationError(`POOLS must be a JSON object of pool name to a limit or "${UNLIMITED}", got ${json}`);
  }
  const parsed = PoolSettingSchema.safeParse(raw);
  if (!parsed.success)
    throw new ConfigurationError(
      `POOLS is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: a limit 0..${MAX_POOL_LIMIT} or "${UNLIMITED}"`).join('; ')}`,
    );
  const limits: Record<string, number> = {};
  const unlimited: string[] = [];
  for (const [pool, value] of Object.entries(parsed.data)) {
    if (value === UNLIMITED) unlimited.push(pool);
    else limits[pool] = value;
  }
  return { limits, unlimited };
}

export function parsePools(json: string, variable = 'POOLS', what = 'pool name'): Record<string, number> {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new ConfigurationError(`${variable} must be a JSON object of ${what} to limit, got ${json}`);
  }
  const parsed = PoolsSchema.safeParse(raw);
  if (!parsed.success)
    throw new ConfigurationError(
      `${variable} is invalid: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}

/** RATES: each value a rate as parseRate reads it; returned in starts per second. */
export function parseRates(json: string): Record<string, number> {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new ConfigurationError(`RATES must be a JSON object of pool or key/KEY to a rate such as "2/s", got ${json}`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigurationError(`RATES must be a JSON object, got ${json}`);
  const rates: Record<string, number> = {};
  for (const [gate, text] of Object.entries(raw)) {
    const perSecond = typeof text === 'string' || typeof text === 'number' ? parseRate(String(text)) : undefined;
    if (perSecond === undefined)
      throw new ConfigurationError(`RATES is invalid: ${gate}: "${String(text)}" is not a rate such as "2/s" or "30/m"`);
    rates[gate] = perSecond;
  }
  return rates;
}

/** Time allowed for the last retry's delivery (SQS, the acquirer's visibility timeout) past its delay. */
export const RETRY_DELIVERY_MARGIN_SECONDS = 15 * 60;

/**
 * The longest RETRY_FOR_SECONDS a kind allows: its start retry window (KindDefinition.startRetryWindowSeconds: AppFlow's
 * client token lasts 8 hours) less the longest retry delay (a retry sent just before the budget ends arrives that much
 * later and resumes the start) and a margin for its delivery. Undefined for a kind whose resumed starts are safe
 * however late.
 */
export function longestRetryForSeconds(windowSeconds: number | undefined, maxDelaySeconds: number): number | undefined {
  if (windowSeconds === undefined) return undefined;
  return windowSeconds - Math.min(maxDelaySeconds, SQS_MAX_DELAY_SECONDS) - RETRY_DELIVERY_MARGIN_SECONDS;
}

/** Refuses a retry budget that would let a resumed start outlive a kind's idempotency (RetryWindowTooLongError). */
function checkRetryWindow(retryForSeconds: number, maxDelaySeconds: number): void {
  for (const kind of KINDS) {
    const window = kind.startRetryWindowSeconds;
    const longest = longestRetryForSeconds(window, maxDelaySeconds);
    if (longest === undefined || retryForSeconds <= longest) continue;
    throw new RetryWindowTooLongError(
      `RETRY_FOR_SECONDS (stage parameter retryForSeconds) is ${retryForSeconds} s, but a resumed start of ${kind.title} finds ` +
        `the run an earlier start call made for only ${window} s after the first call: with the last retry up to ` +
        `${Math.min(maxDelaySeconds, SQS_MAX_DELAY_SECONDS)} s late and ${RETRY_DELIVERY_MARGIN_SECONDS} s for its delivery, ` +
        `the job could run twice. Set it to at most ${longest} s.`,
    );
  }
}

const OverridePolicySchema = z.record(z.string(), z.record(z.string(), z.union([z.boolean(), z.array(z.string().min(1))])));

/** The stage's override policy (OVERRIDES); a kind it names must exist, or the stage's intent is unclear: refused. */
export function parseOverrides(json: string): OverridePolicy {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch {
    throw new ConfigurationError(`OVERRIDES (stage parameter overrides) must be JSON, got ${json}`);
  }
  const parsed = OverridePolicySchema.safeParse(raw);
  if (!parsed.success)
    throw new ConfigurationError(
      `OVERRIDES (stage parameter overrides) must map a kind to its settings, each true, false or a list of names: ${describeIssues(parsed.error, '(overrides)')}`,
    );
  for (const [kind, settings] of Object.entries(parsed.data)) {
    const definition = KINDS.find((k) => k.kind === kind);
    if (!definition) throw new ConfigurationError(`OVERRIDES names no kind '${kind}' (kinds: ${KINDS.map((k) => k.kind).join(', ')})`);
    // A misspelt setting would deny what the stage meant to allow: refused, naming the kind's settings.
    const known: readonly string[] = definition.overrideSettings ?? [];
    for (const setting of Object.keys(settings))
      if (!known.includes(setting))
        throw new ConfigurationError(`OVERRIDES: ${kind} has no setting '${setting}' (its settings: ${known.join(', ') || 'none'})`);
  }
  return parsed.data;
}

function poolSettings({ limits, unlimited }: PoolSetting): Pick<SluiceSettings, 'pools' | 'unlimitedPools'> {
  return { pools: limits, ...(unlimited.length > 0 && { unlimitedPools: unlimited }) };
}

export function settingsFrom(env: SluiceEnv): SluiceSettings {
  checkRetryWindow(env.RETRY_FOR_SECONDS, env.RETRY_MAX_SECONDS);
  return {
    ...poolSettings(parsePoolSetting(env.POOLS)),
    keyLimits: parsePools(env.KEY_LIMITS, 'KEY_LIMITS', 'key prefix'),
    rates: parseRates(env.RATES),
    overrides: parseOverrides(env.OVERRIDES),
    backoff: { baseSeconds: env.RETRY_BASE_SECONDS, maxSeconds: env.RETRY_MAX_SECONDS, retryForSeconds: env.RETRY_FOR_SECONDS },
    startGraceMs: env.START_GRACE_SECONDS * 1000,
    reservationGraceMs: env.RESERVATION_GRACE_SECONDS * 1000,
    maxRunMs: Object.fromEntries(KINDS.map((k) => [k.kind, maxRunSecondsOf(env, k.kind) * 1000])) as Record<JobKind, number>,
    stopOverdueRuns: env.STOP_OVERDUE_RUNS === 'true',
    reconcileBudgetMs: env.RECONCILE_BUDGET_SECONDS * 1000,
    adoptSettleMs: env.ADOPT_SETTLE_SECONDS * 1000,
    reconcileConcurrency: env.RECONCILE_CONCURRENCY,
    handOffStart: env.HAND_OFF_START,
  };
}
