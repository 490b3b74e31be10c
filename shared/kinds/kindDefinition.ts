import type { z } from 'zod';
import type { RunCompletion } from '../domain/job';
import type { OverrideUse } from '../domain/overridePolicy';
import type { AnyOperationErrors } from './apiErrors';

/**
 * A job kind, whole: everything Sluice needs to gate one kind of long job. Each kind is a folder of shared/kinds/
 * (`index.ts` exports its KindDefinition, `simulator.ts` its local simulator) and one line of shared/kinds/registry.ts.
 * The acquirer, releaser, reconciler, CLI, local stack and the serverless.yml drift test read the registry.
 *
 * This module and every kind's `index.ts`, `spec.ts` and `events.ts` are pure (zod only): the SDK adapter
 * (`starter.ts`) is reached only through shared/kinds/starterLoaders.ts, which only the functions that start, check or
 * stop runs import, so a function that never does (jobSets) bundles no job API client.
 */
export interface KindDefinition<Kind extends string = string, Key extends string = string, Schema extends z.ZodObject = AnySchema> {
  /** The `kind` of a job message ("appflow"): stored in the ledger, so never renamed. */
  readonly kind: Kind;
  /** The member name of JobKind (`JobKind.AppFlow`). */
  readonly key: Key;
  /** For people: "AppFlow flows". */
  readonly title: string;
  /** The job spec: shared/domain/job.ts `base` fields plus `kind` and this kind's own fields, strict. */
  readonly schema: Schema;
  /** What the job starts (flow name, Glue job name, state machine ARN), for logs, the CLI and the dashboard. */
  target(spec: z.infer<Schema>): string;
  /**
   * The short name of what the job starts (the flow, the Glue job, the state machine's name, the task definition's
   * family and revision): shown beside the job id wherever jobs are listed, and a set job's default key.
   */
  targetName(spec: z.infer<Schema>): string;
  /**
   * Each name of the spec a stage allows by one of this kind's patterns (iam.params): IAM lets Sluice act only on
   * names that match (`sluice check` and the local stack say which a stage would refuse).
   */
  names(spec: z.infer<Schema>): NameCheck[];
  /**
   * What the spec changes of what the kind's definition runs (a command, an environment, a role, arguments): each must
   * be allowed by the stage's override policy (shared/domain/overridePolicy.ts), or the job is refused. Absent: the
   * kind's specs change nothing of the kind (the names they start are checked by IAM).
   */
  overrides?(spec: z.infer<Schema>): OverrideUse[];
  /** The settings of a stage's override policy for this kind (the `setting` of every use `overrides` returns). */
  readonly overrideSettings?: readonly string[];
  /**
   * Default of the longest a run may hold its slot (seconds) before the reconciler gives it back; the functions read
   * MAX_RUN_SECONDS_<KIND> (serverless.yml parameter maxRunSeconds<Key>).
   */
  readonly maxRunSeconds: number;
  readonly events: KindEvents;
  readonly iam: KindIam;
  /**
   * When a run of this job is over though nothing said so: the reconciler ends it as failed (`reason` its detail) once
   * `at` passed, besides the kind's maximum run time. For kinds whose runs have a deadline of their own (a callback
   * job's timeout and heartbeat); undefined for the others, and for a job without one.
   */
  runDeadline?(spec: z.infer<Schema>, run: RunTimes): RunDeadline | undefined;
  /**
   * The page of a run in the AWS console (`runId`: its execution id; `region`: the stage's), linked from the dashboard.
   * Absent for a kind whose runs have no such page (callback jobs run in the user's own system).
   */
  consoleUrl?(spec: z.infer<Schema>, runId: string, region: string): string;
  /** The SDK's service id for endpoints (AWS_ENDPOINT_URL_<SERVICE>) and request counts: "appflow", "sfn". */
  readonly sdkService: string;
  /** Other SDK services its starter calls that the local simulator plays too (their endpoints point at it locally). */
  readonly moreSdkServices?: readonly string[];
  /**
   * Every operation its starter calls (start, the lookup of an earlier run, status, stop) with every error the API can
   * answer and how Sluice takes each (shared/kinds/apiErrors.ts; the kind's `apiErrors.ts`). A unit test holds them to
   * the SDK clients' exception classes; the error suite drives each through the starter against the simulator.
   */
  readonly apiErrors: readonly AnyOperationErrors[];
  /**
   * How long after a job's first start call a resumed start still finds the run an earlier call may have started (seconds):
   * the lifetime of the kind's idempotency token, or how long its API lists a run after it ended. Past it, a resumed
   * start could run the job twice, so the retry budget (RETRY_FOR_SECONDS) must end well before it (shared/config/
   * settings.ts refuses a longer one). Undefined when a resumed start is safe however late (callback jobs: the user's
   * system dedupes by token).
   */
  readonly startRetryWindowSeconds?: number;
}

/** A page of the AWS console (commercial partition) in `region`: `path` under the console's host, `?region=` added. */
export function awsConsole(region: string, path: string, fragment = ''): string {
  const r = encodeURIComponent(region);
  return `https://${r}.console.aws.amazon.com/${path}?region=${r}${fragment}`;
}

/** The region an ARN names (arn:partition:service:region:...), if it names one. */
export const regionOfArn = (arn: string): string | undefined => arn.split(':')[3] || undefined;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnySchema = z.ZodObject<any>;

/** One name of a job spec and the stage setting (a pattern) that must allow it. */
export interface NameCheck {
  /** the stage setting, one of the kind's iam.params: `allowedFlowPattern` */
  param: string;
  /** where the name is in the spec: `flowName`, `overrides.taskRoleArn` */
  field: string;
  name: string;
}

/** What the ledger knows of a run's times (epoch ms). */
export interface RunTimes {
  startedAt: number;
  /** the last heartbeat of the run, if any (JobRecord.heartbeatAt) */
  heartbeatAt?: number;
}

export interface RunDeadline {
  /** epoch ms */
  at: number;
  /** why the run is over then, for its record (`lastError`) and logs */
  reason: string;
}

export interface StarterOptions {
  /** Told about a lookup that gave up or a run that is not what it should be; the service's logger in Lambda. */
  warn(message: string, details: Record<string, unknown>): void;
}

/** An EventBridge event pattern (the releaser's rules in serverless.yml, the local bus's rules). */
export type EventRule = {
  readonly source: readonly string[];
  readonly 'detail-type': readonly string[];
  readonly [field: string]: unknown;
};

/** A well-formed event that does not end a run, and why (a non-terminal state, a run Sluice does not start). */
export interface IgnoredEvent {
  readonly ignored: string;
}

export const isIgnored = <C extends RunCompletion<string>>(value: C | IgnoredEvent): value is IgnoredEvent => 'ignored' in value;

export interface KindEvents {
  /**
   * The rules its subscriber is subscribed with: exactly these, in serverless.yml (a test fails on drift). A rule may
   * name the kind's stage parameters as `${param:NAME}` (a wildcard of the names Sluice may start): rulesOf renders them.
   */
  readonly rules: readonly EventRule[];
  /**
   * The function of serverless.yml the rules invoke: the releaser unless named (the callback kind's reports go to
   * `callbacks`, which checks their tokens before anything is read or written).
   */
  readonly subscriber?: string;
  /** Reads one event these rules match. Throws InvalidEventError for a malformed one. */
  parse(event: unknown): RunCompletion<string> | IgnoredEvent;
}

const PARAM = /\$\{param:([^}]+)\}/g;

/**
 * A kind's rules as a stage deploys them: each `${param:NAME}` replaced by the value of the stage parameter NAME, which
 * the kind must declare (iam.params); by default the kind's own defaults.
 */
export function rulesOf(
  kind: Pick<KindDefinition, 'kind' | 'events' | 'iam'>,
  params: Readonly<Record<string, unknown>> = kind.iam.params,
): EventRule[] {
  const render = (value: unknown): unknown => {
    if (typeof value === 'string')
      return value.replace(PARAM, (_, name: string) => {
        if (!Object.hasOwn(kind.iam.params, name)) throw new Error(`${kind.kind}: a rule names param ${name} the kind does not declare`);
        const given = params[name];
        if (given === undefined) throw new Error(`${kind.kind}: no value for param ${name}`);
        return String(given);
      });
    if (Array.isArray(value)) return value.map(render);
    if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, render(v)]));
    return value;
  };
  return kind.events.rules.map((rule) => render(rule) as EventRule);
}

/**
 * One IAM statement a function's role needs for this kind. `resource` is a CloudFormation Fn::Sub string and may name
 * the kind's stage parameters as ${param:NAME} (scoping starts to name patterns); never `*`, except ANY_RESOURCE for a
 * statement whose actions are all UNSCOPABLE_READ_ACTIONS.
 */
export interface IamStatement {
  readonly sid: string;
  readonly actions: readonly string[];
  readonly resource: string;
  /**
   * An IAM Condition block (operator -> key -> value). A value naming `${...}` (a pseudo parameter or a stage
   * parameter, as `resource` may) is written through Fn::Sub, any other as itself.
   */
  readonly condition?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

/**
 * Read-only actions IAM cannot scope to a resource: the Service Authorization Reference lists no resource type for them,
 * so a statement granting them must name every resource (`*`). They are the only actions a kind may grant on `*`
 * (test/component/package/kinds.test.ts and template.test.ts hold every other statement to a name pattern).
 * - batch:DescribeJobs, batch:ListJobs: a Batch job's status, and the search for an earlier submission by name.
 */
export const UNSCOPABLE_READ_ACTIONS: readonly string[] = ['batch:DescribeJobs', 'batch:ListJobs'];
export const ANY_RESOURCE = '*';

/** Whether a statement may name ANY_RESOURCE: every one of its actions is an unscopable read. */
export const mayNameAnyResource = (actions: readonly string[]): boolean =>
  actions.length > 0 && actions.every((a) => UNSCOPABLE_READ_ACTIONS.includes(a));

export interface KindIam {
  /** Stage parameters the resources name, with their defaults (serverless.yml `params.default`). */
  readonly params: Readonly<Record<string, string>>;
  /** What starting a run takes (and finding the run an interrupted start made). */
  readonly acquirer: readonly IamStatement[];
  /** What asking a run's status and stopping it take. */
  readonly reconciler: readonly IamStatement[];
  /** What the subscriber of its events takes besides Sluice's own calls, when that is not the releaser (events.subscriber). */
  readonly subscriber?: readonly IamStatement[];
}

/** Start error codes by what they prove (shared/adapters/startErrors.ts has the ones every AWS API shares). */
export interface StartErrorCodes {
  /** The service said no: nothing started, retry later (throttling, limits). */
  readonly refused: readonly string[];
  /** No answer that proves anything: a run may exist (server faults, timeouts). */
  readonly uncertain: readonly string[];
  /** The job is wrong and will stay wrong (validation, not found, access denied); nothing started. */
  readonly permanent: readonly string[];
}
