import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';
import type { DeliveryAttempt } from '../local/bus';
import type { CallMessage } from '../local/workers/messages';
import { groupOf } from './workload';

/**
 * Who made a call, when the bench knows: the bench runs the reconciler (and, in the capacity run, opens pools) inside
 * `benchScope.run('reconciler', ...)`, and middleware on Sluice's clients reads the scope at the call's `initialize`
 * step, which runs in the async context of the code that called `send` (calls made by Sluice's functions invoked by
 * the bus or the event source have no scope). See Tracer for what this cannot do.
 */
export const benchScope = new AsyncLocalStorage<string>();
export const callerOf = (): string => benchScope.getStore() ?? 'functions';

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
  /**
   * What the call touched: `POOL` (the pool counter), `WAIT` (waiter items), `JOB`, `RUN`, `holders` (the index); for a
   * TransactWriteItems the slot change it makes (`take`, `pass`, `claim`, `free`, `reserve`, `revoke`; see slotChangeOf).
   */
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
  /**
   * Writes to the pool counter item (pk POOL#<pool>, sk POOL), failed ones included (a failed conditional write costs a
   * write unit too): every transaction with a counter Update or ConditionCheck in it (DynamoDB bills a ConditionCheck
   * as a write), and the plain writes of a limit (setLimit, createPool).
   */
  itemWrites: number;
  /** Of those, transactions whose counter item is an Update (take, free, reserve, revoke: the count moves). */
  counterUpdates: number;
  /** ... and transactions whose counter item is a ConditionCheck (pass, claim: the count stays). */
  counterChecks: number;
  /** Writes to waiter items (same partition key as the pool item). */
  waiterWrites: number;
  /** Reads of the pool item and queries of its waiters. */
  reads: number;
  /** Of the writes to the pool counter item, those refused (a failed condition, a conflict, a cancelled transaction). */
  failedItemWrites: number;
}

/** The slot changes Sluice makes, each one TransactWriteItems (shared/adapters/dynamodb/leaseStore.ts). */
export type SlotChange = 'take' | 'pass' | 'claim' | 'free' | 'reserve' | 'revoke' | 'park' | 'other';

/** One TransactWriteItems of Sluice's lease store, read from its input. */
export interface SlotTransaction {
  change: SlotChange;
  pool?: string;
  /** The job giving up its slot (pass, free, revoke) or taking, keeping or receiving one (take, claim, reserve). */
  jobId?: string;
  /** pass: the waiting job the slot goes to. */
  toJobId?: string;
  /** How the counter item takes part: moved (Update), checked (ConditionCheck), or not at all. */
  counter: 'update' | 'check' | 'none';
  items: number;
}

export interface SlotChangeCounts {
  tried: number;
  cancelled: number;
  conflicts: number;
}

/** Why a pass transaction was cancelled (its items' cancellation reasons, in item order: counter, from, to). */
export interface PassFailures {
  /** The waiting job's Update failed (no longer queued or waiting with no slot): another releaser reserved it first. */
  targetGone: number;
  /** The finished job's Update failed: its record changed since the releaser read it. */
  stale: number;
  /** The counter's ConditionCheck failed: the pool is over a lowered limit. */
  overLimit: number;
  /** Cancelled because another transaction held one of the items (DynamoDB; the store tries again). */
  conflict: number;
  other: number;
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
  ConditionExpression?: string;
  IndexName?: string;
  TransactItems?: TransactItem[];
};

interface TransactAction {
  TableName?: string;
  Key?: Record<string, unknown>;
  Item?: Record<string, unknown>;
  UpdateExpression?: string;
  ConditionExpression?: string;
  ExpressionAttributeValues?: Record<string, unknown>;
}
type TransactItem = Partial<Record<'Update' | 'ConditionCheck' | 'Put' | 'Delete', TransactAction>>;

/** Any SDK v3 client, as far as adding an initialize-step middleware goes. */
export interface MiddlewareClient {
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

/** A string attribute, as the document client gives it (plain) or the low-level client (`{ S }`). */
const str = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : v && typeof v === 'object' && 'S' in v ? String((v as { S: unknown }).S) : undefined;
/** A number attribute, plain or `{ N }`. */
const num = (v: unknown): number | undefined =>
  typeof v === 'number' ? v : v && typeof v === 'object' && 'N' in v ? Number((v as { N: unknown }).N) : undefined;

const isCounterKey = (key: Record<string, unknown> | undefined) => str(key?.pk)?.startsWith('POOL#') === true && str(key?.sk) === 'POOL';
const jobIdOfKey = (key: Record<string, unknown> | undefined) => {
  const pk = str(key?.pk);
  return pk?.startsWith('JOB#') ? pk.slice('JOB#'.length) : undefined;
};

/**
 * Reads a TransactWriteItems of the lease store from its input. The slot changes have these shapes (leaseStore.ts):
 * - take: counter Update (+1, `inUse < #limit`) and the job's Update that sets `holderPool = :holderPool`;
 * - reserve: counter Update (+1) and the waiting job's Update `SET #state = :reserved, ... holderPool = :pool` (receive;
 *   `:starting` when the releaser fills the units and starts the job itself);
 * - free / revoke: counter Update (-1; revoke: only while `inUse > #limit`) and the job's Update `REMOVE holderPool`;
 * - pass: counter ConditionCheck, the finished job's Update (`holderPool = :pool` fence, `REMOVE holderPool`) and the
 *   waiting job's Update (`SET #state = :reserved, ... holderPool = :pool`, or `SET #state = :starting, ...` when the
 *   releaser starts it itself: no claim follows);
 * - claim: counter ConditionCheck and the reserved job's Update (`#state = :reserved` in its condition);
 * - a first delivery's take: counter Update (+1) and a Put of its record holding the slot; its park (no counter): a
 *   Put of its record and one of its waiter item.
 */
export function slotChangeOf(input: { TransactItems?: TransactItem[] }): SlotTransaction {
  const items = input.TransactItems ?? [];
  let counter: SlotTransaction['counter'] = 'none';
  let pool: string | undefined;
  let delta: number | undefined;
  let counterCondition = '';
  const receiving: string[] = [];
  const releasing: string[] = [];
  const taking: string[] = [];
  const keeping: string[] = [];
  const parking: string[] = [];
  for (const item of items) {
    // A first delivery's record, written whole with its take (it holds a slot) or its park (with its waiter item).
    const put = item.Put as { Item?: Record<string, unknown> } | undefined;
    const putJob = jobIdOfKey(put?.Item);
    if (putJob) {
      (put!.Item!.holderPool !== undefined ? taking : parking).push(putJob);
      continue;
    }
    const check = item.ConditionCheck;
    const update = item.Update;
    if (check && isCounterKey(check.Key)) {
      counter = 'check';
      pool = str(check.Key?.pk)!.slice('POOL#'.length);
      continue;
    }
    if (!update) continue;
    if (isCounterKey(update.Key)) {
      counter = 'update';
      pool = str(update.Key?.pk)!.slice('POOL#'.length);
      delta = num(update.ExpressionAttributeValues?.[':delta']);
      counterCondition = update.ConditionExpression ?? '';
      continue;
    }
    const jobId = jobIdOfKey(update.Key);
    if (!jobId) continue;
    const expression = update.UpdateExpression ?? '';
    // receive (reserved) or receiveStarting (starting under the releaser's attempt, the claim's patch in the same SET)
    if (/^SET #state = :(reserved|starting), [^]*holderPool = :pool/.test(expression)) receiving.push(jobId);
    else if (/REMOVE[^]*holderPool/.test(expression)) releasing.push(jobId);
    else if (/holderPool = :holderPool/.test(expression)) taking.push(jobId);
    else keeping.push(jobId);
  }
  const base = { counter, items: items.length, ...(pool !== undefined ? { pool } : {}) };
  if (counter === 'check' && releasing.length === 1 && receiving.length === 1)
    return { ...base, change: 'pass', jobId: releasing[0], toJobId: receiving[0] };
  if (counter === 'check' && keeping.length === 1) return { ...base, change: 'claim', jobId: keeping[0] };
  if (counter === 'update' && delta === 1 && taking.length === 1) return { ...base, change: 'take', jobId: taking[0] };
  if (counter === 'update' && delta === 1 && receiving.length === 1) return { ...base, change: 'reserve', jobId: receiving[0] };
  if (counter === 'update' && delta === -1 && releasing.length === 1)
    return { ...base, change: /inUse > #limit/.test(counterCondition) ? 'revoke' : 'free', jobId: releasing[0] };
  if (counter === 'none' && parking.length === 1) return { ...base, change: 'park', jobId: parking[0] };
  return { ...base, change: 'other' };
}

/**
 * A short name for what one DynamoDB call touched: the item kind of its key (`POOL` for the pool counter, `WAIT`,
 * `JOB`, `RUN`, `POOLS` for the registry), `holders` for a query of the index, the slot change of a transaction.
 */
export function itemOf(op: string, input: Input): string | undefined {
  if (op === 'TransactWriteItems') return slotChangeOf(input).change;
  if (op === 'Query') {
    if (input.IndexName) return input.IndexName;
    const pk = str(input.ExpressionAttributeValues?.[':pk']);
    return pk?.startsWith('POOL#') ? 'WAIT' : pk;
  }
  const sk = str(input.Key?.sk) ?? str(input.Item?.sk);
  const pk = str(input.Key?.pk) ?? str(input.Item?.pk);
  if (sk?.startsWith('WAIT#')) return 'WAIT';
  if (sk === 'WAIT!RACE') return 'RACE';
  return pk?.split('#')[0];
}

/** Holders-index entries a slot change puts or deletes (holderPool, the index key, is set by take and receive, removed by a release). */
export const INDEX_WRITES: Record<SlotChange, number> = { take: 1, reserve: 1, free: 1, revoke: 1, pass: 2, claim: 0, park: 0, other: 0 };

/**
 * The jobs a write files on the sparse `ended` index (shared/domain/endedIndex.ts): a write that moves a job to a
 * terminal state sets `endedBucket` and `endedSk` in the same write (shared/adapters/dynamodb/jobItem.ts, moveUpdate and
 * toJobItem), so the index gets an entry for it. Each item of a TransactWriteItems is read the same way.
 */
export function endedEntriesOf(op: string, input: Input): string[] {
  const fromUpdate = (a: { Key?: Record<string, unknown>; UpdateExpression?: string } | undefined) =>
    a?.UpdateExpression && /endedBucket = :endedBucket/.test(a.UpdateExpression) ? jobIdOfKey(a.Key) : undefined;
  const fromPut = (a: { Item?: Record<string, unknown> } | undefined) => (a?.Item?.endedBucket !== undefined ? jobIdOfKey(a.Item) : undefined);
  const ids =
    op === 'TransactWriteItems'
      ? (input.TransactItems ?? []).map((item) => fromUpdate(item.Update) ?? fromPut(item.Put))
      : op === 'UpdateItem'
        ? [fromUpdate(input)]
        : op === 'PutItem'
          ? [fromPut(input)]
          : [];
  return ids.filter((id): id is string => id !== undefined);
}

const isConflict = (error: unknown) =>
  ((error as { CancellationReasons?: Array<{ Code?: string }> } | undefined)?.CancellationReasons ?? []).some(
    (r) => r.Code === 'TransactionConflict',
  );

/** What a cancelled transaction's reasons say, for a pass (items: counter check, from, to). */
function passFailure(error: unknown): keyof PassFailures {
  const reasons = (error as { name?: string; CancellationReasons?: Array<{ Code?: string }> } | undefined)?.CancellationReasons;
  if (!reasons) return 'other';
  const failed = (i: number) => reasons[i]?.Code === 'ConditionalCheckFailed';
  if (failed(1)) return 'stale';
  if (failed(2)) return 'targetGone';
  if (failed(0)) return 'overLimit';
  if (reasons.some((r) => r.Code === 'TransactionConflict')) return 'conflict';
  return 'other';
}

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
 * middleware on Sluice's own SDK clients sees every call it makes. A hand-off is read from the releaser's pass
 * transaction itself (a TransactWriteItems: ConditionCheck on the pool counter, Update of JOB#<finished> removing its
 * holderPool, Update of JOB#<waiting> setting it reserved with holderPool), which names the finished job and the job
 * let in.
 *
 * (AsyncLocalStorage cannot attribute calls to a releaser invocation here: the bus and the event source invoke the
 * functions from callbacks, and the SDK's keep-alive sockets carry the async context of whoever opened them into later,
 * unrelated calls. Only the bench's own entry points carry a scope, benchScope: a reconciler run it starts, the pool
 * admin in the capacity run. Their calls are made by code awaiting inside the scope, so the scope holds for them; the
 * capacity run checks it did not leak: no take or claim, which only the acquirer makes, ever shows in the reconciler's.)
 */
export const minusEarly = (a: EarlyCompletions, b: EarlyCompletions): EarlyCompletions => ({
  events: a.events - b.events,
  noted: a.noted - b.noted,
  completedByAcquirer: a.completedByAcquirer - b.completedByAcquirer,
});

/** Pass failures between two readings of Tracer.passFailures. */
export function minusPassFailures(a: PassFailures, b: PassFailures): PassFailures {
  return {
    targetGone: a.targetGone - b.targetGone,
    stale: a.stale - b.stale,
    overLimit: a.overLimit - b.overLimit,
    conflict: a.conflict - b.conflict,
    other: a.other - b.other,
  };
}

export class Tracer {
  /** Completion events by execution id. */
  readonly events = new Map<string, EventTiming>();
  /** Successful hand-offs (pass transactions): job let in -> the finished job whose slot it got, and when the write returned. */
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
  /** Pass transactions tried, and cancelled (any reason: see passFailures). */
  transferAttempts = 0;
  transferFailures = 0;
  /** Cancelled pass transactions by reason; `targetGone` are the lost races (another releaser reserved the same waiter). */
  readonly passFailures: PassFailures = { targetGone: 0, stale: 0, overLimit: 0, conflict: 0, other: 0 };
  /** Pass transactions per finished job (its releaser's tries, cancelled ones included). */
  readonly transferTries = new Map<string, number>();
  /** Races lost per finished job: its pass transactions cancelled because the waiting job was already reserved. */
  readonly transferRaceLosses = new Map<string, number>();
  /** When each finished job's releaser issued its first pass transaction (with transfers[].at: what lost races cost). */
  readonly firstTransferAt = new Map<string, number>();
  /**
   * Slot-change transactions by kind (take, pass, claim, ...): tried, cancelled, and of those cancelled because another
   * transaction held one of their items (TransactionConflict: DynamoDB; the dynalite shim makes transactions wait instead).
   */
  readonly slotChanges = new Map<SlotChange, SlotChangeCounts>();
  /** Items in every TransactWriteItems so far, cancelled ones included (DynamoDB bills each item of a transaction as two writes per KB). */
  transactItems = 0;
  /** Holders-index entries put or deleted by applied slot changes (take, reserve: a put; free, revoke: a delete; pass: both). */
  indexWrites = 0;
  /**
   * Entries of the `ended` index written by applied writes (endedEntriesOf): one put per job that ends; a job already
   * filed there (a `dead` job whose kept slot is given back: its entry moves to the new time) a delete and a put. Apart
   * by the write that made them: plain writes, and items of a TransactWriteItems (a release's job update in a pass or
   * free transaction).
   */
  endedIndexWrites = 0;
  endedIndexWritesInTransactions = 0;
  /** The jobs filed on the ended index so far. */
  readonly endedJobs = new Set<string>();
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
   * Notes handed back by the write that records the run (UpdateItem RUN#... whose item, ALL_NEW, carries
   * `earlyCompletion`), by group: the acquirer then completes the run itself, with no reconciler. The note stays on the
   * run's key, so a retried write hands it back again: each run is counted once.
   */
  readonly handedBackCompletions = new Map<string, number>();
  private readonly handedBackRuns = new Set<string>();
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
        let failure: unknown;
        try {
          const result = await next(args);
          output = result.output;
          ok = true;
          return result;
        } catch (error) {
          failure = error;
          throw error;
        } finally {
          this.finished({ service, op, input, output, ok, failure, t0, t1: Date.now(), ms: performance.now() - p0, seq });
        }
      },
      { step: 'initialize', name: 'sluiceBenchTrace' },
    );
  }

  /**
   * A call a function made in a worker thread (the local stack's functionWorkers), reported when it ended: read as the
   * middleware above reads the calls of this thread's clients.
   */
  ingest(call: CallMessage): void {
    const input = (call.input ?? {}) as Input;
    this.before(call.service, call.op, input, call.t0);
    this.finished({ ...call, input, output: call.output, failure: call.failure, seq: this.seq++ });
  }

  private finished(call: {
    service: string;
    op: string;
    input: Input;
    output: unknown;
    ok: boolean;
    failure: unknown;
    t0: number;
    t1: number;
    ms: number;
    seq: number;
  }): void {
    const { service, op, input, output, ok, failure, t0, t1, ms, seq } = call;
    push(this.opDurations, `${service}.${op}`, ms);
    this.after(service, op, input, output, ok, t0, t1, failure);
    if (this.recording) {
      const item = service === 'dynamodb' ? itemOf(op, input) : undefined;
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

  private before(service: string, op: string, input: Input, t0: number): void {
    if (service === 'sqs' && op === 'SendMessage' && input.QueueUrl === this.jobQueueUrl()) {
      if (input.DelaySeconds) this.delayedSends++;
      else {
        const jobId = jobIdOfBody(input.MessageBody);
        if (jobId) push(this.sends, jobId, t0);
      }
    }
    if (service !== 'dynamodb') return;
    const trafficOf = (pool: string) => this.trafficOf(pool);
    if (op === 'TransactWriteItems') {
      this.transactItems += input.TransactItems?.length ?? 0;
      const tx = slotChangeOf(input);
      if (tx.pool === undefined || tx.counter === 'none') return;
      const traffic = trafficOf(tx.pool);
      traffic.itemWrites++;
      if (tx.counter === 'update') traffic.counterUpdates++;
      else traffic.counterChecks++;
      return;
    }
    if (op === 'Query' && input.IndexName) return; // the holders index: not the pool's partition
    const pk = str(input.Key?.pk) ?? str(input.Item?.pk) ?? str(input.ExpressionAttributeValues?.[':pk']);
    if (!pk?.startsWith('POOL#')) return;
    const traffic = trafficOf(pk.slice('POOL#'.length));
    const sk = str(input.Key?.sk) ?? str(input.Item?.sk);
    if (WRITES.has(op)) {
      if (sk === 'POOL') traffic.itemWrites++;
      else traffic.waiterWrites++;
    } else if (READS.has(op)) traffic.reads++;
  }

  private trafficOf(pool: string): PartitionTraffic {
    let traffic = this.partitions.get(pool);
    if (!traffic)
      this.partitions.set(pool, (traffic = { itemWrites: 0, counterUpdates: 0, counterChecks: 0, waiterWrites: 0, reads: 0, failedItemWrites: 0 }));
    return traffic;
  }

  private after(service: string, op: string, input: Input, output: unknown, ok: boolean, t0: number, t1: number, failure: unknown): void {
    if (service === 'dynamodb' && ok)
      for (const jobId of endedEntriesOf(op, input)) {
        const entries = this.endedJobs.has(jobId) ? 2 : 1;
        this.endedJobs.add(jobId);
        if (op === 'TransactWriteItems') this.endedIndexWritesInTransactions += entries;
        else this.endedIndexWrites += entries;
      }
    // Slot changes (DynamoLeaseStore: one TransactWriteItems each); a pass is the hand-off: one slot moves from the
    // finished job to the waiting one.
    if (service === 'dynamodb' && op === 'TransactWriteItems') {
      const tx = slotChangeOf(input);
      if (!ok && tx.pool !== undefined && tx.counter !== 'none') this.trafficOf(tx.pool).failedItemWrites++;
      let counts = this.slotChanges.get(tx.change);
      if (!counts) this.slotChanges.set(tx.change, (counts = { tried: 0, cancelled: 0, conflicts: 0 }));
      counts.tried++;
      if (!ok) counts.cancelled++;
      if (!ok && isConflict(failure)) counts.conflicts++;
      if (ok) this.indexWrites += INDEX_WRITES[tx.change];
      if (tx.change === 'pass' && tx.jobId && tx.toJobId) {
        const from = tx.jobId;
        this.transferAttempts++;
        this.transferTries.set(from, (this.transferTries.get(from) ?? 0) + 1);
        if (!this.firstTransferAt.has(from)) this.firstTransferAt.set(from, t0);
        if (!ok) {
          this.transferFailures++;
          const why = passFailure(failure);
          this.passFailures[why]++;
          if (why === 'targetGone') this.transferRaceLosses.set(from, (this.transferRaceLosses.get(from) ?? 0) + 1);
        } else if (!this.transfers.has(tx.toJobId)) this.transfers.set(tx.toJobId, { from, at: t1 });
      }
    }
    if (service === 'dynamodb' && !ok && WRITES.has(op) && str(input.Key?.sk ?? input.Item?.sk) === 'POOL') {
      const pk = str(input.Key?.pk) ?? str(input.Item?.pk);
      if (pk?.startsWith('POOL#')) this.trafficOf(pk.slice('POOL#'.length)).failedItemWrites++;
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
      else if (
        op === 'UpdateItem' &&
        (output as { Attributes?: Record<string, unknown> } | undefined)?.Attributes?.earlyCompletion &&
        !this.handedBackRuns.has(runPk)
      ) {
        this.handedBackRuns.add(runPk);
        count(this.handedBackCompletions);
      }
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
