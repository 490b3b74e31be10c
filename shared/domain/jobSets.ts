import { parse as parseYaml } from 'yaml';
import * as z from 'zod';
import { InvalidJobSetsError } from '../errors';
import type { JobSpecBase } from './job';
import { canonicalJson } from './jobBody';
import { describeIssues } from './zodIssues';
import { fireTimes } from './setSchedule';
import { fnv1a } from './fnv1a';

/**
 * Job sets: jobs declared once (a YAML file in the repository) that run together on a schedule, each fire of the
 * schedule a *run* of the set. Pure: the file's text in, validated sets out; a run's job ids are derived from the set,
 * the run and the job, so a schedule that fires twice for one time (or an expander that dies part way and is invoked
 * again) enqueues the same ids, and the acquirer runs each job once.
 */

/** Set names and job keys end up inside job ids (at most 128 characters: see `setJobId`). */
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$/;
const JOB_KEY = /^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/;
const INVOCATION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

/** EventBridge Scheduler's recurring expressions: `rate(5 minutes)` or `cron(min hour dom month dow year)`. */
const RATE = /^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$/;
const CRON = /^cron\((\S+ \S+ \S+ \S+ \S+ \S+)\)$/;

/**
 * A run keeps its jobs' keys in one DynamoDB item (400 KB, names included): 5,000 keys of at most 40 ASCII characters
 * are 205 KB of it. With the summary's failed ids (at most MAX_LISTED_FAILED_IDS of at most 127 bytes: 13 KB) and the
 * rest (a few hundred bytes), the largest run item is under 220 KB, whatever fails: test/unit/domain/jobSets.test.ts
 * computes it with DynamoDB's own size rules.
 */
export const MAX_JOBS_PER_SET = 5_000;

/**
 * A run's summary (on its item) and its completion event name at most this many failed jobs, the first in the set's
 * order; they count every one, and `sluice sets failed` lists them all from the jobs' records. With ids of at most
 * 127 characters, the event's detail stays far under EventBridge's 256 KB.
 */
export const MAX_LISTED_FAILED_IDS = 100;

/** What decides when the reconciler reads an open run's records: its counts, and when it was last counted and read. */
export interface OpenRunClock {
  total: number;
  /** ended jobs counted: a hint (a count can be missed by an invocation that died, or made twice) */
  ended: number;
  startedAt: number;
  /** when a job last counted itself on the run */
  countedAt?: number;
  /** when its records were last read */
  checkedAt?: number;
  /** how many of its jobs that read found still open */
  checkedOpen?: number;
}

/**
 * Counts a run may be short of and still be read once its counting goes quiet: lost counts are rare (an invocation
 * stopped between a job's end and its count; a lost answer is recognised), so a run whose counts are further from its
 * total is still running, and reading its records (up to 5,000) after every quiet spell would be waste. At least
 * MIN_NEARLY_COUNTED: invocations that time out tend to come together (a throttled table, a slow job API), and a run
 * read once per count at most (readSinceCounted) costs at most that many extra reads.
 */
export const MIN_NEARLY_COUNTED = 3;
export const nearlyCounted = (total: number): number => Math.max(MIN_NEARLY_COUNTED, Math.ceil(total / 100));

/**
 * Whether the reconciler reads an open run's records now. Counts are hints, so the records decide. A run is read:
 * - when its counts reach its total, unless it was read since its last count (a count made twice would otherwise have
 *   it read on every pass until its last job ends);
 * - when its counts are within nearlyCounted of its total, counting has been quiet for `quietMs` since the last count,
 *   and it was not read since: a missed last count is repaired one quiet period after the run's last counted end;
 * - when its last read found at most nearlyCounted jobs open, `quietMs` after that read, count or none: a count made
 *   twice can have the run read before its last job ended, and that job's count be the one missed;
 * - every `everyMs` in any case (a run whose remaining counts were all missed, or none of whose jobs was counted).
 */
export function openRunDue(run: OpenRunClock, now: number, { quietMs, everyMs }: { quietMs: number; everyMs: number }): boolean {
  const readSinceCounted = run.checkedAt !== undefined && run.countedAt !== undefined && run.checkedAt >= run.countedAt;
  if (run.ended >= run.total && !readSinceCounted) return true;
  const quiet = run.countedAt !== undefined && now - run.countedAt >= quietMs;
  if (quiet && !readSinceCounted && run.total - run.ended <= nearlyCounted(run.total)) return true;
  const fewLeft = run.checkedOpen !== undefined && run.checkedOpen <= nearlyCounted(run.total);
  if (fewLeft && now - run.checkedAt! >= quietMs) return true;
  return now - (run.checkedAt ?? run.startedAt) > everyMs;
}

const SetSchema = z.object({
  name: z.string().regex(NAME, "a set name is 1-48 letters, digits, '_' or '-'"),
  description: z.string().max(512).optional(),
  schedule: z.string().refine((s) => RATE.test(s) || CRON.test(s), {
    message:
      "schedule must be 'rate(N minutes|hours|days)' or 'cron(min hour day-of-month month day-of-week year)' as EventBridge Scheduler takes it",
  }),
  /** IANA time zone of the cron expression (EventBridge Scheduler's ScheduleExpressionTimezone) */
  timezone: z
    .string()
    .default('UTC')
    .refine((tz) => isTimeZone(tz), { message: 'timezone must be an IANA time zone, e.g. Europe/Paris' }),
  /** the pool of its jobs, unless a job names its own */
  pool: z.string().optional(),
  /** false: declared, deployed disabled */
  enabled: z.boolean().default(true),
  jobs: z
    .array(z.record(z.string(), z.unknown()))
    .min(1, 'a set needs at least one job')
    .max(MAX_JOBS_PER_SET, `a set has at most ${MAX_JOBS_PER_SET} jobs (its run keeps their keys in one item)`),
});

const FileSchema = z.object({ sets: z.array(z.unknown()).default([]) });

/** One job of a set: its key (unique in the set, part of its id) and its spec without id. */
export interface SetJob<Spec extends JobSpecBase = JobSpecBase> {
  key: string;
  spec: Omit<Spec, 'id'>;
}

export interface JobSet<Spec extends JobSpecBase = JobSpecBase> {
  name: string;
  description?: string;
  schedule: string;
  timezone: string;
  enabled: boolean;
  jobs: SetJob<Spec>[];
}

/** The set and run a job of a set belongs to (on its spec: the releaser counts the run's ended jobs by it). */
export interface JobSetRef {
  name: string;
  run: string;
}

/**
 * Reads and validates a job sets file. Every job is checked with the same schema as a job message (any kind: the kinds'
 * union, which the caller passes, as the kinds compose above the domain); an error names the file, the set and the job.
 * A job without a `key` is keyed by the name of what it starts (`targetName`, its kind's) when that name is its own in
 * the set, so its ids say what it runs (`nightly.20261127T0100Z.partner-007-refresh`); else by a hash of its content.
 * Throws InvalidJobSetsError.
 */
export function parseJobSets<Spec extends JobSpecBase>(
  text: string,
  source: string,
  specSchema: z.ZodType<Spec, unknown>,
  options: { targetName?: (spec: Spec) => string | undefined } = {},
): JobSet<Spec>[] {
  let raw: unknown;
  try {
    raw = parseYaml(text, { merge: true }) ?? {}; // merge keys (<<), as serverless.yml and js-yaml read them
  } catch (error) {
    throw new InvalidJobSetsError(`${source}: not valid YAML: ${(error as Error).message}`, { cause: error });
  }
  const file = FileSchema.safeParse(raw);
  if (!file.success) throw new InvalidJobSetsError(`${source}: ${describeIssues(file.error, '(file)')}`);
  const sets: JobSet<Spec>[] = [];
  file.data.sets.forEach((rawSet, index) => {
    const label = `${source}: set ${typeof (rawSet as { name?: unknown })?.name === 'string' ? `'${(rawSet as { name: string }).name}'` : `#${index + 1}`}`;
    const parsed = SetSchema.safeParse(rawSet);
    if (!parsed.success) throw new InvalidJobSetsError(`${label}: ${describeIssues(parsed.error, '(file)')}`);
    const set = parsed.data;
    try {
      fireTimes(set.schedule, set.timezone, 0, 1); // its fields, as a schedule would read them
    } catch (error) {
      throw new InvalidJobSetsError(`${label}: ${(error as Error).message}`, { cause: error });
    }
    if (sets.some((s) => s.name === set.name)) throw new InvalidJobSetsError(`${label}: another set has this name`);
    const parsedJobs = set.jobs.map((rawJob, j) => {
      const where = `${label}, job ${j + 1}`;
      const { key: givenKey, ...fields } = rawJob as { key?: unknown } & Record<string, unknown>;
      if ('id' in fields)
        throw new InvalidJobSetsError(`${where}: a job of a set has no id (its id is derived from the set, the run and its key)`);
      if (givenKey !== undefined && (typeof givenKey !== 'string' || !JOB_KEY.test(givenKey)))
        throw new InvalidJobSetsError(`${where}: key must be 1-40 letters, digits, '_' or '-'`);
      const spec = specSchema.safeParse({ pool: set.pool, ...fields, id: 'x' });
      if (!spec.success) throw new InvalidJobSetsError(`${where}: ${describeIssues(spec.error, '(file)')}`);
      const { id: _id, ...withoutId } = spec.data;
      return { where, givenKey: givenKey as string | undefined, spec: withoutId, name: nameKey(options.targetName?.(spec.data)) };
    });
    const nameKeys = uniqueNameKeys(parsedJobs);
    const keys = new Map<string, number>();
    const jobs = parsedJobs.map(({ where, givenKey, spec }, j) => {
      const key = givenKey ?? nameKeys.get(j) ?? contentKey(spec);
      const earlier = keys.get(key);
      if (earlier !== undefined)
        throw new InvalidJobSetsError(
          givenKey === undefined
            ? `${where}: the same job as job ${earlier + 1} (give them distinct 'key's if both must run)`
            : `${where}: key '${key}' is job ${earlier + 1}'s too`,
        );
      keys.set(key, j);
      return { key, spec };
    });
    sets.push({ name: set.name, description: set.description, schedule: set.schedule, timezone: set.timezone, enabled: set.enabled, jobs });
  });
  return sets;
}

/** A run's name: its scheduled time to the minute, UTC (`20261127T0100Z`), or `now-<id>` for a run started by hand. */
export function runOfScheduledTime(scheduledTime: string): string {
  const at = new Date(scheduledTime);
  if (Number.isNaN(at.getTime())) throw new InvalidJobSetsError(`not a time: '${scheduledTime}'`);
  return at.toISOString().slice(0, 16).replace(/[-:]/g, '') + 'Z';
}

/** A run started by hand (`sluice sets run-now`): idempotent per invocation id. */
export function runOfInvocation(invocationId: string): string {
  if (!INVOCATION_ID.test(invocationId)) throw new InvalidJobSetsError("an invocation id is 1-32 letters, digits, '_' or '-'");
  return `now-${invocationId}`;
}

/** `<set>.<run>.<key>`: at most 48 + 1 + 36 + 1 + 40 characters, within a job id's 128. */
export function setJobId(set: string, run: string, key: string): string {
  return `${set}.${run}.${key}`;
}

/** The jobs of one run of a set, with their ids and the run they belong to. */
export function jobsOfRun<Spec extends JobSpecBase>(set: JobSet<Spec>, run: string): Spec[] {
  return set.jobs.map(({ key, spec }) => ({ ...spec, id: setJobId(set.name, run, key), jobSet: { name: set.name, run } }) as Spec);
}

/** The job ids of one run (the reconciler reads a run's records by them). */
export function jobIdsOfRun(set: JobSet, run: string): string[] {
  return set.jobs.map(({ key }) => setJobId(set.name, run, key));
}

/**
 * A job's name as a key: runs of other characters than letters, digits, '_' and '-' become one '-', a leading '_' or
 * '-' goes, and it is cut to 40 characters; undefined when nothing is left.
 */
export function nameKey(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const key = name
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^[_-]+/, '')
    .slice(0, 40);
  // A name that reads as a content key (j + 8 hex digits) is left to the content: the two kinds of key never meet.
  return JOB_KEY.test(key) && !CONTENT_KEY.test(key) ? key : undefined;
}

/**
 * The jobs (by index) keyed by their name: those without a key of their own whose name key no other job of the set has,
 * as its name key or as its given key. Two jobs of one Glue job (different arguments) are both keyed by their content.
 */
function uniqueNameKeys(jobs: ReadonlyArray<{ givenKey?: string; name?: string }>): Map<number, string> {
  const uses = new Map<string, number>();
  for (const job of jobs) {
    const taken = job.givenKey ?? job.name;
    if (taken !== undefined) uses.set(taken, (uses.get(taken) ?? 0) + 1);
  }
  const keys = new Map<number, string>();
  jobs.forEach((job, i) => {
    if (job.givenKey === undefined && job.name !== undefined && uses.get(job.name) === 1) keys.set(i, job.name);
  });
  return keys;
}

const CONTENT_KEY = /^j[0-9a-f]{8}$/;

/** A key from the job's content: FNV-1a of its canonical JSON, 8 hex digits (stable across edits of other jobs). */
function contentKey(spec: object): string {
  const text = canonicalJson(spec);
  const hash = fnv1a(text);
  return `j${hash.toString(16).padStart(8, '0')}`;
}

function isTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}
