import { performance } from 'node:perf_hooks';
import type { DeliveryAttempt } from '../bus';
import { groupOf } from './workload';

/** A completion event as the releaser got it. */
export interface EventTiming {
  executionId: string;
  name: string;
  group: string;
  /** When the event reached the bus (the simulator emits it straight into put()). */
  putAt: number;
  /** When the bus started the first delivery attempt, i.e. the releaser was invoked. */
  invokedAt: number;
}

/** One AWS call made by Sluice's own clients (recorded only while `recording` is on). */
export interface OpRecord {
  service: string;
  op: string;
  t0: number;
  t1: number;
  ms: number;
  /** Pool-item and waiter keys make a call recognisable: `POOL`, `WAIT`, `JOB`, `RUN`. */
  item?: string;
  ok: boolean;
  /** Order in which the calls were issued (t0 has only millisecond resolution). */
  seq: number;
  /** The job a wake-up SendMessage carries, or a start call (StartFlow, StartJobRun) is for. */
  jobId?: string;
}

/**
 * Completion events that came before the acquirer had recorded their run (a run of 0 ms ends before the acquirer's
 * write after its start call). Sluice notes such an event on the run's key, and the write that records the run hands
 * it back: the acquirer then completes the run itself, so its slot does not wait for the reconciler.
 */
export interface EarlyCompletions {
  /** Events whose run the releaser looked up and did not find. */
  events: number;
  /** Of those, noted on the run's key; the rest found the run recorded a moment later and were completed by the releaser. */
  noted: number;
  /** Notes handed back by the write that recorded the run (the acquirer's recordRun): completed at once by the acquirer. */
  completedByAcquirer: number;
}

export interface PartitionTraffic {
  /** Writes to the pool item itself (acquire, release, transfer, limit), conditional failures included: they cost a write unit too. */
  itemWrites: number;
  /** Writes to waiter items (same partition key as the pool item). */
  waiterWrites: number;
  /** Reads of the pool item and queries of its waiters. */
  reads: number;
}

type Input = Record<string, unknown> & {
  QueueUrl?: string;
  MessageBody?: string;
  DelaySeconds?: number;
  Key?: Record<string, unknown>;
  clientToken?: string;
  Arguments?: Record<string, string>;
  Item?: Record<string, unknown>;
  UpdateExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
};

interface MiddlewareClient {
  middlewareStack: {
    add(
      middleware: (
        next: (args: unknown) => Promise<{ output?: unknown }>,
        context: { commandName?: string },
      ) => (args: unknown) => Promise<unknown>,
      options: { step: 'initialize'; name: string },
    ): void;
  };
}

const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem']);
const READS = new Set(['GetItem', 'Query']);

const str = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : v && typeof v === 'object' && 'S' in v ? String((v as { S: unknown }).S) : undefined;

function jobIdOfBody(body: string | undefined): string | undefined {
  if (!body) return undefined;
  try {
    const id = (JSON.parse(body) as { id?: unknown }).id;
    return typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/** The run a completion event reports: AppFlow's execution-id and flow-name, Glue's jobRunId and jobName. */
function completionOf(event: DeliveryAttempt['event']): { executionId: string; name: string } {
  const d = (event.detail ?? {}) as Record<string, unknown>;
  return { executionId: String(d['execution-id'] ?? d.jobRunId ?? ''), name: String(d['flow-name'] ?? d.jobName ?? '') };
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/**
 * Watches Sluice from the outside, without changing it: the bus's onDeliver hook times each completion event, and
 * middleware on Sluice's own SDK clients sees every call it makes. A hand-off is read from the releaser's slot-transfer
 * write itself (`REMOVE holders.#from SET holders.#to`), which names the finished job and the job let in.
 *
 * (AsyncLocalStorage cannot attribute calls to a releaser invocation here: the SDK's keep-alive sockets carry the async
 * context of whoever opened them into later, unrelated calls.)
 */
export const minusEarly = (a: EarlyCompletions, b: EarlyCompletions): EarlyCompletions => ({
  events: a.events - b.events,
  noted: a.noted - b.noted,
  completedByAcquirer: a.completedByAcquirer - b.completedByAcquirer,
});

export class Tracer {
  /** Completion events by execution id. */
  readonly events = new Map<string, EventTiming>();
  /** Successful slot transfers: job let in -> the finished job whose slot it got, and when the write returned. */
  readonly transfers = new Map<string, { from: string; at: number }>();
  /** Job messages sent to the job queue without delay, by job id (issue times). */
  readonly sends = new Map<string, number[]>();
  /** Times a ReceiveMessage of the acquirer's event source returned each job. */
  readonly receives = new Map<string, number[]>();
  delayedSends = 0;
  /**
   * Receives of the job queue that returned nothing. fauxqs wakes every waiting long poll when one message arrives and
   * the losers return empty; SQS keeps them waiting. So these are counted apart, not as Sluice's requests.
   */
  emptyReceives = 0;
  /** Transfer writes tried and failed (the target already held a slot: another releaser reserved the same waiter). */
  transferAttempts = 0;
  transferFailures = 0;
  /** Transfer writes per finished job (its releaser's tries; more than 1: it lost a race for a waiter). */
  readonly transferTries = new Map<string, number>();
  /** When each finished job's releaser issued its first transfer write (with transfers[].at: what lost races cost). */
  readonly firstTransferAt = new Map<string, number>();
  /**
   * Early completions, by group: completion events whose run the releaser looked up and did not find (GetItem RUN#...,
   * no item). For a Sluice pool the event beat the acquirer's write of the run record (the run ended at once).
   */
  readonly earlyCompletions = new Map<string, number>();
  /**
   * Early completions the releaser noted on the run's key (the PutItem with `earlyCompletion` applied), by group. The
   * others found the run recorded a moment later (the note's condition failed) and were completed by the releaser.
   */
  readonly notedCompletions = new Map<string, number>();
  /**
   * Notes handed back by the write that records the run (UpdateItem RUN#... whose old item had `earlyCompletion`), by
   * group: the acquirer then completes the run itself, with no reconciler.
   */
  readonly handedBackCompletions = new Map<string, number>();
  readonly attemptsByRule = new Map<string, number>();
  readonly opDurations = new Map<string, number[]>();
  readonly partitions = new Map<string, PartitionTraffic>();
  recording = false;
  ops: OpRecord[] = [];
  private seq = 0;
  private readonly seenEvents = new Set<string>();
  private readonly ended = new Map<string, number>();
  private readonly endWaiters = new Set<{ group: string; n: number; resolve: () => void }>();
  private readonly completionListeners = new Set<(event: EventTiming) => void>();

  constructor(private readonly jobQueueUrl: () => string) {}

  /** The bus calls this just before it invokes a rule's target. */
  onDeliver(attempt: DeliveryAttempt): void {
    this.attemptsByRule.set(attempt.rule, (this.attemptsByRule.get(attempt.rule) ?? 0) + 1);
    if (!attempt.rule.startsWith('releaser') || this.seenEvents.has(attempt.event.id)) return;
    this.seenEvents.add(attempt.event.id);
    const { executionId, name } = completionOf(attempt.event);
    const timing: EventTiming = { executionId, name, group: groupOf(name), putAt: attempt.putAt, invokedAt: attempt.startedAt };
    if (!this.events.has(executionId)) this.events.set(executionId, timing);
    this.noteEnded(timing);
  }

  /** Early completions of a group so far (subtract an earlier value to get a window's). */
  earlyCompletionsOf(group: string): EarlyCompletions {
    return {
      events: this.earlyCompletions.get(group) ?? 0,
      noted: this.notedCompletions.get(group) ?? 0,
      completedByAcquirer: this.handedBackCompletions.get(group) ?? 0,
    };
  }

  /** Releaser invocations (bus delivery attempts to Sluice's releaser rules) so far. */
  releaserInvocations(): number {
    let n = 0;
    for (const [rule, count] of this.attemptsByRule) if (rule.startsWith('releaser')) n += count;
    return n;
  }

  /** Completion events of a group that reached the releaser so far. */
  endedCount(group: string): number {
    return this.ended.get(group) ?? 0;
  }

  waitEnded(group: string, n: number, timeoutMs: number): Promise<void> {
    if (this.endedCount(group) >= n) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const entry = { group, n, resolve: () => (clearTimeout(timer), resolve()) };
      const timer = setTimeout(() => {
        this.endWaiters.delete(entry);
        reject(new Error(`timed out after ${timeoutMs} ms: ${this.endedCount(group)}/${n} runs of ${group} ended`));
      }, timeoutMs);
      this.endWaiters.add(entry);
    });
  }

  onCompletion(listener: (event: EventTiming) => void): () => void {
    this.completionListeners.add(listener);
    return () => this.completionListeners.delete(listener);
  }

  resetOpStats(): void {
    this.opDurations.clear();
  }

  /** Adds the tracing middleware to one of Sluice's clients. */
  instrument(client: unknown, service: string): void {
    (client as MiddlewareClient).middlewareStack.add(
      (next, context) => async (args) => {
        const op = (context.commandName ?? 'Unknown').replace(/Command$/, '');
        const input = ((args as { input?: Input }).input ?? {}) as Input;
        const t0 = Date.now();
        const p0 = performance.now();
        const seq = this.seq++;
        this.before(service, op, input, t0);
        let ok = false;
        let output: unknown;
        try {
          const result = await next(args);
          output = result.output;
          ok = true;
          return result;
        } finally {
          const t1 = Date.now();
          const ms = performance.now() - p0;
          push(this.opDurations, `${service}.${op}`, ms);
          this.after(service, op, input, output, ok, t0, t1);
          if (this.recording) {
            const sk = str(input.Key?.sk) ?? str(input.Item?.sk);
            const pk = str(input.Key?.pk) ?? str(input.Item?.pk) ?? str(input.ExpressionAttributeValues?.[':pk']);
            const item = sk?.startsWith('WAIT#') || op === 'Query' ? 'WAIT' : pk?.split('#')[0];
            const jobId =
              op === 'SendMessage'
                ? jobIdOfBody(input.MessageBody)
                : op === 'StartFlow'
                  ? input.clientToken?.replace(/^sluice-/, '')
                  : op === 'StartJobRun'
                    ? input.Arguments?.['--sluice-job-id']
                    : undefined;
            this.ops.push({ service, op, t0, t1, ms, ok, seq, ...(item ? { item } : {}), ...(jobId ? { jobId } : {}) });
          }
        }
      },
      { step: 'initialize', name: 'sluiceBenchTrace' },
    );
  }

  private before(service: string, op: string, input: Input, t0: number): void {
    if (service === 'sqs' && op === 'SendMessage' && input.QueueUrl === this.jobQueueUrl()) {
      if (input.DelaySeconds) this.delayedSends++;
      else {
        const jobId = jobIdOfBody(input.MessageBody);
        if (jobId) push(this.sends, jobId, t0);
      }
    }
    if (service === 'dynamodb') {
      const pk = str(input.Key?.pk) ?? str(input.Item?.pk) ?? str(input.ExpressionAttributeValues?.[':pk']);
      if (!pk?.startsWith('POOL#')) return;
      const pool = pk.slice('POOL#'.length);
      let traffic = this.partitions.get(pool);
      if (!traffic) this.partitions.set(pool, (traffic = { itemWrites: 0, waiterWrites: 0, reads: 0 }));
      const sk = str(input.Key?.sk) ?? str(input.Item?.sk);
      if (WRITES.has(op)) {
        if (sk === 'POOL') traffic.itemWrites++;
        else traffic.waiterWrites++;
      } else if (READS.has(op)) traffic.reads++;
    }
  }

  private after(service: string, op: string, input: Input, output: unknown, ok: boolean, t0: number, t1: number): void {
    // The hand-off write (DynamoLeaseStore.transfer): one slot moves from #from to #to.
    const names = input.ExpressionAttributeNames;
    if (
      service === 'dynamodb' &&
      op === 'UpdateItem' &&
      names?.['#from'] &&
      names['#to'] &&
      /holders\.#from/.test(input.UpdateExpression ?? '')
    ) {
      this.transferAttempts++;
      this.transferTries.set(names['#from'], (this.transferTries.get(names['#from']) ?? 0) + 1);
      if (!this.firstTransferAt.has(names['#from'])) this.firstTransferAt.set(names['#from'], t0);
      if (!ok) this.transferFailures++;
      else if (!this.transfers.has(names['#to'])) this.transfers.set(names['#to'], { from: names['#from'], at: t1 });
    }
    // Early completions (DynamoJobLedger.findRun, noteEarlyCompletion, recordRun on the run's key RUN#<kind>#<id>).
    const runPk = service === 'dynamodb' ? (str(input.Key?.pk) ?? str(input.Item?.pk)) : undefined;
    if (runPk?.startsWith('RUN#') && ok) {
      const executionId = runPk.split('#').slice(2).join('#');
      const count = (map: Map<string, number>) => {
        const group = this.events.get(executionId)?.group ?? '?';
        map.set(group, (map.get(group) ?? 0) + 1);
      };
      if (op === 'GetItem' && !(output as { Item?: unknown } | undefined)?.Item) count(this.earlyCompletions);
      else if (op === 'PutItem' && input.Item?.earlyCompletion !== undefined) count(this.notedCompletions);
      else if (op === 'UpdateItem' && (output as { Attributes?: Record<string, unknown> } | undefined)?.Attributes?.earlyCompletion)
        count(this.handedBackCompletions);
    }
    if (service === 'sqs' && op === 'ReceiveMessage' && ok && input.QueueUrl === this.jobQueueUrl()) {
      const messages = (output as { Messages?: Array<{ Body?: string }> } | undefined)?.Messages ?? [];
      if (messages.length === 0) this.emptyReceives++;
      for (const m of messages) {
        const id = jobIdOfBody(m.Body);
        if (id) push(this.receives, id, t1);
      }
    }
  }

  private noteEnded(event: EventTiming): void {
    const n = (this.ended.get(event.group) ?? 0) + 1;
    this.ended.set(event.group, n);
    for (const listener of this.completionListeners) {
      try {
        listener(event);
      } catch {
        // a listener must not break delivery
      }
    }
    for (const w of this.endWaiters) {
      if (w.group === event.group && n >= w.n) {
        this.endWaiters.delete(w);
        w.resolve();
      }
    }
  }
}
