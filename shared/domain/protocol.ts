import { JobState } from './jobState';

/** What a step does to the job's slot. */
export const SlotEffect = {
  /** holds none before or after */
  None: 'none',
  /** takes its units (its weight) from every limit of its demand, only where each has room for them */
  Take: 'take',
  /** keeps the slot it holds */
  Keep: 'keep',
  /** gives its units back, or hands its slot to the first waiter in the same transaction (each counter moved by the difference) */
  Release: 'release',
  /** receives a slot handed over by a release, or free units (no limit of its demand left over its maximum) */
  Receive: 'receive',
  /** an uncounted slot it holds becomes a counted one: its units added to its pool's counter (no room condition) */
  Count: 'count',
} as const;
export type SlotEffect = (typeof SlotEffect)[keyof typeof SlotEffect];

/** A row that leaves the job in the state it found it in (its write is about the slot only). */
export const UNCHANGED = 'unchanged';

export interface ProtocolRow {
  /** who makes the write */
  by: string;
  /** the states the record must be in (besides having the version its writer read); 'new' for an item not yet there */
  from: readonly JobState[] | 'new';
  to: JobState | typeof UNCHANGED;
  slot: SlotEffect;
  /** why the step happens */
  when: string;
}

const { Scheduled, Queued, Waiting, Reserved, Starting, Running, Succeeded, Failed, Dead, Cancelled } = JobState;

/**
 * The lease protocol: every write Sluice makes to a job record, as one table (docs/protocol.md shows the same rows;
 * test/unit/domain/protocol.test.ts checks they agree). Every write but `register`, `schedule`, `receive`, `receiveStarting`, `heartbeat` and `adopt` is conditioned on the
 * version of the record its writer read; slot changes move the record and the pool's counter in one transaction (an
 * unlimited pool's uncounted slot: the record alone, one conditional write; shared/domain/unlimited.ts).
 */
export const PROTOCOL = {
  register: {
    by: 'acquirer',
    from: 'new',
    to: Queued,
    slot: SlotEffect.None,
    when: 'first delivery of a job id (written with its take or park, in the same transaction)',
  },
  schedule: {
    by: 'acquirer',
    from: 'new',
    to: Scheduled,
    slot: SlotEffect.None,
    when: 'first delivery of a job whose notBefore is a second or more ahead: within 15 minutes its delayed copy was sent first; later, it is put on the due index for the loader',
  },
  load: {
    by: 'loader (reconciler)',
    from: [Scheduled],
    to: Queued,
    slot: SlotEffect.None,
    when: 'due within 15 minutes: its message was sent first with DelaySeconds; the job leaves the due index',
  },
  take: {
    by: 'acquirer',
    from: [Scheduled, Queued],
    to: Starting,
    slot: SlotEffect.Take,
    when: "a delivery finds a free slot (a scheduled job: once due) on counters that admit it: none adopting, and a pool the configuration gives a limit not on a counter still an unlimited pool's; a job of an unlimited pool with no start rate and no keyed limit takes no limit's units, its record only (leaseUncounted), so it always finds one",
  },
  park: {
    by: 'acquirer',
    from: [Scheduled, Queued],
    to: Waiting,
    slot: SlotEffect.None,
    when: "the pool is full (or its counter admits nothing for now: adopting, or still an unlimited pool's though the configuration gives the pool a limit, which the acquirer then switches to adopting), or its take lost every race for a busy counter (waiter item written first; a scheduled job: once due)",
  },
  reject: { by: 'acquirer', from: [Scheduled, Queued], to: Dead, slot: SlotEffect.None, when: 'the pool is unknown (dead-lettered next)' },
  cancel: {
    by: 'cli (sluice cancel)',
    from: [Scheduled, Queued, Waiting],
    to: Cancelled,
    slot: SlotEffect.None,
    when: "the job is cancelled before it holds a slot: it never starts (a waiting job's waiter item is deleted in the same transaction)",
  },
  receive: {
    by: 'releaser, reconciler, pool admin',
    from: [Queued, Waiting],
    to: Reserved,
    slot: SlotEffect.Receive,
    when: 'a slot is handed over or found free (its wake-up is sent next)',
  },
  receiveStarting: {
    by: 'releaser',
    from: [Queued, Waiting],
    to: Starting,
    slot: SlotEffect.Receive,
    when: "a slot is handed over (its pass) or free units filled by the releaser that starts the job itself (one hop): the receive and the claim's patch in one write",
  },
  claim: {
    by: 'acquirer',
    from: [Reserved],
    to: Starting,
    slot: SlotEffect.Keep,
    when: 'its wake-up arrives (a slot reserved for it by the reconciler, the pool admin, an acquirer or a releaser with handOffStart: queue)',
  },
  resume: {
    by: 'acquirer',
    from: [Starting],
    to: Starting,
    slot: SlotEffect.Keep,
    when: 'a delivery finds the start attempt presumed dead, or its retry due (claimableAt passed)',
  },
  record: { by: 'acquirer', from: [Starting], to: Running, slot: SlotEffect.Keep, when: 'the start call answered with a run' },
  rateWait: {
    by: 'acquirer',
    from: [Starting],
    to: Starting,
    slot: SlotEffect.Keep,
    when: 'its booked start time passed (a late wake-up) and its start rate has none to give within the horizon: its message comes back when it has (claimableAt)',
  },
  backoff: {
    by: 'acquirer',
    from: [Starting],
    to: Queued,
    slot: SlotEffect.Release,
    when: 'the start was refused (nothing started) and the retry budget lasts: the retry is sent with a delay',
  },
  hold: {
    by: 'acquirer',
    from: [Starting],
    to: Starting,
    slot: SlotEffect.Keep,
    when: 'the start got no answer or a 5xx (a run may exist) and the retry budget lasts: the retry looks for that run',
  },
  handBack: {
    by: 'acquirer',
    from: [Starting],
    to: Starting,
    slot: SlotEffect.Keep,
    when: 'a start made in one hop (by the releaser, whose event does not come back for this job) failed: before its backoff, hold or giveUp, claimableAt = when its retry is due and the retry is sent, so an invocation dying after leaves a message or a stalled start',
  },
  giveUp: {
    by: 'acquirer',
    from: [Starting],
    to: Dead,
    slot: SlotEffect.Release,
    when: 'the start failed for good, or the retry budget is spent, and no run can exist (dead-lettered next)',
  },
  giveUpKeep: {
    by: 'acquirer',
    from: [Starting],
    to: Dead,
    slot: SlotEffect.Keep,
    when: "as giveUp, but a run may exist: the slot is kept until that run ended, or leaseUntil (the run's own timeout, else its kind's maximum run time); a kind that knows the run id before the start (a callback job's) records it, with its run reference, so the run's report gives the slot back",
  },
  deadLettered: {
    by: 'acquirer',
    from: [Dead],
    to: Dead,
    slot: SlotEffect.Keep,
    when: 'its DLQ copy was sent (noted after the send: a dead job without the note has its copy sent again on delivery)',
  },
  foundRun: {
    by: 'acquirer',
    from: [Dead],
    to: Dead,
    slot: SlotEffect.Keep,
    when: 'a run of a job given up with its slot kept turns out to exist: its id is recorded, so its end frees the slot',
  },
  complete: {
    by: 'releaser, reconciler',
    from: [Starting, Running],
    to: Succeeded, // or Failed: the run's outcome
    slot: SlotEffect.Release,
    when: "the run ended (its event, or the job API asked by the reconciler), or the job API no longer knows it (recorded long enough ago that this is not the API's eventual consistency), or a callback run's own deadline passed; never a run past its maximum run time that goes on (it keeps its slot and is reported overdue)",
  },
  heartbeat: {
    by: 'callbacks',
    from: [Running],
    to: Running,
    slot: SlotEffect.Keep,
    when: "a callback job's run reports it is alive: heartbeatAt moves its heartbeat deadline (conditioned on running this run, no version read)",
  },
  notStarted: {
    by: 'releaser, reconciler',
    from: [Starting, Running],
    to: Queued,
    slot: SlotEffect.Release,
    when: 'its run ended without ever starting (an ECS task with no capacity for it): retried like a refused start, its retry sent first; its next start replaces that run (replacesRun)',
  },
  giveBack: {
    by: 'releaser, reconciler',
    from: [Dead],
    to: Dead,
    slot: SlotEffect.Release,
    when: 'a kept slot: its run ended (its event or report, or the job API), or the API no longer knows it, or leaseUntil passed with no run id known to ask about (or for a callback job)',
  },
  revoke: {
    by: 'pool admin, reconciler',
    from: [Reserved],
    to: Waiting,
    slot: SlotEffect.Release,
    when: 'the pool is over a lowered limit, or adopting: the reservation is taken back (only while inUse > limit, or adopting) and the job waits again',
  },
  adopt: {
    by: 'reconciler',
    from: [Starting, Running, Dead],
    to: UNCHANGED,
    slot: SlotEffect.Count,
    when: "its slot was taken uncounted while its pool was unlimited, and the configuration gives the pool a limit again: the slot becomes a counted one of the pool and the pool's counter takes its units, even over the limit; conditioned on the record still holding that uncounted slot (no version read, none added: the job's state and every decision on it stay as they are)",
  },
} as const satisfies Record<string, ProtocolRow>;
export type Step = keyof typeof PROTOCOL;

/** The outcome states of `complete`. */
export const COMPLETE_TO: readonly JobState[] = [Succeeded, Failed];

/** Whether a record in `state` may take `step` (the version fence is checked by the write itself). */
export function allows(step: Step, state: JobState): boolean {
  const from = PROTOCOL[step].from;
  return from !== 'new' && (from as readonly JobState[]).includes(state);
}
