import path from 'node:path';
import type { RunStatus } from '../ports/jobStarter';

/**
 * What the kind conformance suite (test/component/kinds/conformance.test.ts) needs to know of a kind beyond its
 * definition: a job spec for the simulator, every status the API documents with what Sluice makes of it, and sample
 * events from the service's documentation. Each kind's folder has one (`conformance.ts`, exporting `conformance`).
 */
export interface KindConformance {
  /** A job of this kind for job id `id`, starting the flow / job / state machine named `name` in the simulator. */
  spec(id: string, name: string): unknown;
  /** Every status value of the status API (from the SDK's enum), with the RunStatus it must map to. */
  readonly statuses: Readonly<Record<string, RunStatus>>;
  /** The status values the SDK's enum lists, to prove `statuses` misses none. */
  readonly documentedStatuses: readonly string[];
  /**
   * False for a kind with no API to ask about a run (callback jobs): status() answers in-progress for every run, which
   * ends by its report or its deadline; the suite then checks that instead of the status API agreeing with the event.
   */
  readonly statusApi?: false;
  /** The kind's configuration its starter reads from the environment (allowed targets, secrets), for the simulator. */
  readonly env?: Readonly<Record<string, string>>;
  /** Well-formed events that end no run (non-terminal states, other reports): each must be ignored with a reason. */
  readonly ignoredEvents: ReadonlyArray<readonly [what: string, event: unknown]>;
  /** Events the kind's rules match but that are malformed: each must throw InvalidEventError. */
  readonly malformedEvents: ReadonlyArray<readonly [what: string, event: unknown]>;
}

/** An EventBridge envelope around a detail, as AWS delivers it. */
export const envelope = (source: string, detailType: string, detail: unknown) => ({
  version: '0',
  id: '6a7e8feb-b491-4cf7-a9f1-bf3703467718',
  'detail-type': detailType,
  source,
  account: '111122223333',
  time: '2026-01-01T09:06:20Z',
  region: 'us-east-1',
  resources: [],
  detail,
});

/** A kind's `conformance.ts` (local code and tests only: the functions never load it). */
export function conformanceOf(kind: string): KindConformance {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const module = require(path.join(__dirname, kind, 'conformance')) as { conformance?: KindConformance };
  if (!module.conformance) throw new Error(`shared/kinds/${kind}/conformance.ts must export \`conformance\``);
  return module.conformance;
}
