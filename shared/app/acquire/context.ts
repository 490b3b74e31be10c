import type { FullHints } from '../../domain/fullHint';
import type { Step } from '../../domain/protocol';
import type { JobSpec } from '../../kinds/registry';
import type { JobRecord, Move } from '../../ports/jobLedger';
import type { CompleteRun } from '../completeRun';
import type { SluiceDeps } from '../deps';
import type { HandOff } from '../handOff';
import type { AcquireResult, InboundMessage } from './result';

/**
 * What every step of the acquirer works with (docs/protocol.md): the ports, the services a step hands on to, and the
 * pools this environment saw full a moment ago (domain/fullHint.ts). One per Acquirer.
 */
export interface Acquiring {
  deps: SluiceDeps;
  handOff: HandOff;
  completeRun: CompleteRun;
  fullHints: FullHints;
  /** Pools whose counter this instance made an unlimited pool's before its first uncounted take of them (take.ts). */
  followedUnlimited: Set<string>;
}

/** How a start came about: in the releaser's own invocation (one hop), and when its slot was handed over. */
export interface StartVia {
  oneHop: boolean;
  handOffSentAt?: number;
}

/** One delivery of a job being decided on, round after round, until a step ends it. */
export interface Delivery {
  message: InboundMessage;
  spec: JobSpec;
  /**
   * The job's record is not written yet: its first write (take or park) creates it in the same transaction (register
   * as part of that write). Cleared once a write finds the job registered already.
   */
  unsaved: boolean;
  /**
   * Names this invocation's claim on the record: a write whose answer was lost (the SDK's retry then meets its own
   * effect and fails) is recognised as ours by it.
   */
  attempt: string;
  via: StartVia;
  /** A reserved job's start reports its hand-off latency, from when its wake-up was sent. */
  handOffSentAt?: number;
}

/** A step's write lost to another writer (or its answer was lost): read the record again and decide again. */
export const MOVED = 'moved';

/** The take failed for want of room that is there now (or a limit just created): take again. */
export const TAKE_AGAIN = 'take-again';

/** How a step of a delivery ends: the delivery's answer, or read again, or take again. */
export type StepOutcome = AcquireResult | typeof MOVED | typeof TAKE_AGAIN;

/** The steps a delivery of a known job decides on (domain/decisions.ts onDelivery). */
export type DeliveryStep = Extract<Step, 'take' | 'claim' | 'resume'>;

/** A step of a delivery: its write (`move`, fenced by the version read) and what follows it. */
export type StepHandler = (acq: Acquiring, delivery: Delivery, record: JobRecord, move: Move, now: number) => Promise<StepOutcome>;

/** Reads lost to concurrent writers before a delivery gives up (each loss means another writer moved the job on). */
export const MAX_ROUNDS = 10;

/** The way a start of this delivery came about; a claimed reservation reports its hand-off latency. */
export function viaOf(delivery: Delivery, step: DeliveryStep): StartVia {
  return step === 'claim' ? { ...delivery.via, handOffSentAt: delivery.handOffSentAt } : delivery.via;
}
