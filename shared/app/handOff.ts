import { fittingPrefix, gatesLeftOver } from '../domain/backfill';
import { type Demand, gatesOf } from '../domain/limits';
import { freeSlots, type PoolSnapshot } from '../domain/pool';
import { candidatesToRead, handOffOrder, lastRaceAt, marksRace, SPREAD_WIDTH, spreadOf, spreadWidth } from '../domain/handOffPick';
import { rankOf, type Waiter, waiterDemand, waiterGate } from '../domain/waiting';
import { type Move, wroteMoveAfterAll } from '../ports/jobLedger';
import { PassOutcome, type Receiver, ReserveOutcome, type StartingClaim, type WaitingListRead } from '../ports/leaseStore';
import { Backfill } from './backfill';
import { MetricName, type SluiceDeps } from './deps';
import { blockingGate } from './gates';
import { configuredDemand, type PoolConfiguration } from '../domain/unlimited';
import { ensureTick } from './ticks';
import { startAttempt } from '../domain/startAttempt';

/** Reservations a fill makes at once. */
const FILL_PARALLEL = 16;

/** Bounds the retry loops below; each round makes progress unless other writers keep winning races. */
const MAX_ROUNDS = 25;

/**
 * `settings`: the stage's configuration, where the caller has it (not the CLI): a receiver of a pool it gives a limit is
 * admitted only onto a limited pool's counter (receiverOf). Without it, only an adopting counter refuses.
 */
type HandOffDeps = Pick<SluiceDeps, 'leases' | 'ledger' | 'queue' | 'clock' | 'log' | 'metrics'> &
  Partial<Pick<SluiceDeps, 'settings' | 'random'>>;

/** A read of a limit's waiting list made ahead of a release (the releaser makes it while it reads the job). */
export interface Prefetched {
  gate: string;
  /** how many waiters were asked for */
  asked: number;
  /** the spread window the release is to use (fixed when the read was sized) */
  width: number;
  read: Promise<WaitingListRead>;
  /** a hand-off ticket, taken with the read when the release spreads */
  ticket?: Promise<number | undefined>;
}

export interface HandOffOptions {
  /**
   * The widest spread window (shared/domain/handOffPick.ts): default SPREAD_WIDTH; 1 never spreads (every releaser
   * tries the head first, as Sluice did before; the bench compares the two).
   */
  spreadWidth?: number;
  /** Spread by hand-off tickets (default true); false: by the releasing job's id alone (the bench compares the two). */
  tickets?: boolean;
}

/**
 * Starts a job a slot was just handed to, in this invocation: one hop from the completion event to the start call, with
 * no queue between them for arrivals to delay. `attempt`: the pass moved the job to starting under it already (row
 * `receiveStarting`); without it the job is reserved (a fill), and is claimed and started as a wake-up would be. Every
 * write is fenced by the record's version. Throws when it could not, and then the job's wake-up message is sent instead
 * (a duplicate of a start under way, which its delivery finds starting).
 */
export type StartHandedOff = (waiter: Waiter, handedOffAt: number, attempt: string | undefined) => Promise<void>;

/**
 * Lets waiting jobs in. A released slot is handed straight to the first waiting job in the same transaction that
 * moves the finished job (so a newcomer cannot take it), then that job is started: here, when the caller can start
 * jobs (`startHere`: the releaser), else by sending its spec to the queue again, where the acquirer finds the job
 * reserved and starts it. No waiting job is polled; one release costs the same whatever the backlog.
 *
 * Each limit (gate) has its own waiting list; a job waits on the list of the limit that had no room for it. A release
 * looks at the heads of the lists of every limit it gives units back to and hands the slot to the first of them in
 * wait order. A waiter that another of its limits still holds back is moved to that limit's list (one transaction),
 * so no list is ever scanned past jobs that cannot run.
 */
export class HandOff {
  private readonly backfiller: Backfill;
  /** When this releaser (this container) last lost a hand-off race on each limit: it spreads there for a while. */
  private readonly lostRaceAt = new Map<string, number>();
  /** The newest race mark this releaser knows on each limit (read with the list, or its own): it spreads for that too. */
  private readonly raceMarkAt = new Map<string, number>();
  private readonly maxWidth: number;
  private readonly tickets: boolean;

  constructor(
    private readonly deps: HandOffDeps,
    private readonly startHere?: StartHandedOff,
    options: HandOffOptions = {},
  ) {
    this.backfiller = new Backfill(deps);
    this.maxWidth = options.spreadWidth ?? SPREAD_WIDTH;
    this.tickets = options.tickets ?? true;
  }

  /** Reads the head of `gate`'s waiting list as a release of it will want it (the releaser reads it while it reads the job). */
  prefetch(gate: string): Prefetched {
    const width = this.widthFor(gate);
    const asked = candidatesToRead(width);
    const read = this.deps.leases.readWaitingList(gate, asked);
    read.catch(() => undefined); // awaited by the release; an early failure must not be reported as unhandled
    return { gate, asked, width, read, ...(width > 1 && this.tickets && { ticket: ticketOf(this.deps.leases, gate) }) };
  }

  /**
   * Applies `move` (a job giving up its slot: protocol steps complete, backoff, giveUp, giveBack), passing the slot to
   * the first waiter if there is one. `released` runs once the move is written, before the job let in is started (its
   * start may take the rest of the invocation's time: what the release owes the finished job goes first). Returns false, changing nothing, if the job's record changed since it was read.
   * `oldest` is `prefetch(demand.pool)` when the caller made it already. Which waiter is tried first: see
   * shared/domain/handOffPick.ts (the head, unless a release of the limit lost a race lately: this one, or another by
   * the race mark read with the list).
   */
  async release(demand: Demand, move: Move, oldest?: Prefetched, released?: () => Promise<void>): Promise<boolean> {
    // Race marks are written beside the release's next tries, and all are done before it returns (none left running
    // in an environment Lambda freezes after the invocation).
    const marks: Array<Promise<void>> = [];
    try {
      return await this.passOrFree(demand, move, marks, oldest, released);
    } finally {
      await Promise.all(marks);
    }
  }

  private async passOrFree(
    demand: Demand,
    move: Move,
    marks: Array<Promise<void>>,
    oldest?: Prefetched,
    released?: () => Promise<void>,
  ): Promise<boolean> {
    const { leases, clock } = this.deps;
    const spread = spreadOf(move.jobId);
    const lists = gatesOf(demand).map((gate) => {
      const prefetched = oldest?.gate === gate ? oldest : undefined;
      const told = (racedAt: number | undefined) => this.toldOfRace(gate, racedAt);
      return new WaitList(leases, gate, prefetched?.width ?? this.widthFor(gate), spread, this.tickets, told, prefetched);
    });
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const heads = await Promise.all(lists.map((list) => list.next()));
      // The list whose first waiter comes first in wait order gives the slot (to the waiter its spread picks).
      const best = heads.reduce<{ first: Waiter; pick: Waiter } | undefined>(
        (best, head) => (head && (!best || head.first.waitKey < best.first.waitKey) ? head : best),
        undefined,
      );
      if (!best) break;
      const next = best.pick;
      lists.find((list) => list.gate === waiterGate(next))!.skip(next);
      if (next.jobId === move.jobId) {
        // The releasing job's own waiter item, left by a crash: it is not waiting.
        await leases.removeWaiter(waiterGate(next), next.waitKey);
        continue;
      }
      const starting = this.startingClaim(next);
      const outcome = await leases.pass(demand, move, { ...receiverOf(next, this.deps.settings ?? {}), starting }, clock.now());
      // Stale may be our own pass, applied with its answer lost: the job's record shows it, so the waiter has the slot.
      switch (outcome === PassOutcome.Stale && (await this.wrote(move)) ? PassOutcome.Passed : outcome) {
        case PassOutcome.Passed:
          await released?.();
          await this.dispatch(next, starting?.attempt);
          this.deps.metrics.count(MetricName.Releases, 1, demand.pool);
          await this.fillLeftOver(demand, waiterDemand(next));
          return true;
        case PassOutcome.Stale:
          return false;
        case PassOutcome.TargetGone:
          // Let in by a concurrent hand-off, which starts or sends it (or the reconciler, if that one died); its item
          // went with that transaction. Not deleted here: the job may wait again under the same key by then.
          this.lostRace(lists, next, marks);
          continue;
        case PassOutcome.TargetDone:
          // Ended (or unknown) with no slot, its item left by a crash: removed. Not a race: what was read still holds.
          await leases.removeWaiter(waiterGate(next), next.waitKey);
          continue;
        case PassOutcome.OverLimit:
        case PassOutcome.RateLimited:
        case PassOutcome.Contended:
          // A limit was lowered, or the waiter needs room (or a start) the release does not give: free the units, then
          // let in whoever fits (the waiter moves to the list of the limit that holds it back; a rate's tick lets it in).
          return this.freeThenFill(demand, move, released);
      }
    }
    return this.freeThenFill(demand, move, released);
  }

  /**
   * Reserves free units of the gate for the first waiting jobs of its list and sends them, FILL_PARALLEL at a time (a
   * limit raised by hundreds lets them in within seconds, not one round trip after another). Returns how many it let in.
   */
  async fill(gate: string, depth = 0): Promise<number> {
    const { leases } = this.deps;
    let admitted = 0;
    const passed = new Set<string>();
    for (let round = 0; round < MAX_ROUNDS; round++) {
      const snapshot = await leases.getPool(gate);
      if (!snapshot) return admitted;
      const free = freeSlots(snapshot);
      if (free === 0) return admitted;
      const waiters = (await leases.oldestWaiters(gate, free + passed.size))
        .filter((waiter) => !passed.has(waiter.waitKey))
        .map((waiter) => ({ ...waiter, gate: waiter.gate ?? gate }));
      if (waiters.length === 0) return admitted;
      // Strict order: the waiters from the head on that fit the free units one after another. When the head does not
      // fit, the jobs behind it that cannot delay it (backfill) are let in instead.
      const fitting = fittingPrefix(
        waiters.map((waiter) => waiterDemand(waiter).units),
        free,
      );
      if (fitting === 0) return admitted + (await this.backfill(gate, snapshot, passed));
      const candidates = waiters.slice(0, fitting);
      // A rated gate books its starts one after another (each booking moves its tat): in parallel they would only
      // fence each other out.
      const parallel = snapshot.rate ? 1 : FILL_PARALLEL;
      for (let i = 0; i < candidates.length; i += parallel) {
        const chunk = candidates.slice(i, i + parallel);
        const outcomes = await allDone(chunk.map((waiter) => this.admit(waiter, gate, depth)));
        // Passed: let in, gone from this list, or moved off it. One still waiting here (its reserve found the gate full,
        // the counter read after it found room: freed meanwhile) keeps its place, and the next round tries it again:
        // left out, the jobs behind it would overtake it, and backfill would take the next one for the head.
        chunk.forEach((waiter, j) => {
          if (!outcomes[j]!.waiting) passed.add(waiter.waitKey);
        });
        admitted += outcomes.reduce((sum, outcome) => sum + outcome.admitted, 0);
        // This gate has no room for a waiter's units: it keeps its place at the head (strict order, no starvation of
        // heavy jobs); the gate's next release tries it again.
        if (outcomes.some((outcome) => outcome.stop)) return admitted;
      }
    }
    return admitted;
  }

  /**
   * After a hand-over: units it leaves free (the receiver is lighter, or does not name a limit the released job held, or
   * units idled before it, too few for the head) go to the next waiters of those limits (gatesLeftOver says which: only
   * weighted hand-overs, and limits the receiver does not name, cost this fill). The slot is passed already: a failure
   * here is logged, and the next release or the reconciler's fill lets them in.
   */
  private async fillLeftOver(from: Demand, to: Demand): Promise<void> {
    for (const gate of gatesLeftOver(from, to))
      await this.fill(gate).catch((error: unknown) =>
        this.deps.log.warn('could not let waiting jobs into units a hand-over left free', { gate, error: String(error) }),
      );
  }

  /**
   * Lets in the waiters behind the gate's head that cannot delay it (./backfill.ts): each reserved one after another,
   * just after its `startBy` is checked against the clock (its slot is stamped with that time), and started meanwhile,
   * so a pick's units do not idle while the starts before it are made.
   */
  private async backfill(gate: string, snapshot: PoolSnapshot, passed: Set<string>): Promise<number> {
    const starts: Array<Promise<void>> = [];
    let admitted = 0;
    try {
      for (const { waiter, startBy } of await this.backfiller.waiters(gate, snapshot, passed)) {
        // Its slot is stamped with the time admit reads next, in this same tick: past startBy it would end after the shadow time.
        if (this.deps.clock.now() > startBy) continue;
        const outcome = await this.admit(waiter, gate, 1, starts);
        if (!outcome.waiting) passed.add(waiter.waitKey);
        admitted += outcome.admitted;
        if (outcome.stop) break;
      }
    } finally {
      await allDone(starts);
    }
    return admitted;
  }

  /**
   * Reserves one waiter's units (or moves it to the limit that holds it back); stop: this gate has no room for it;
   * waiting: it is still on this gate's list, not let in.
   */
  private async admit(waiter: Waiter, gate: string, depth: number, starts?: Array<Promise<void>>): Promise<Admitted> {
    const { leases, clock } = this.deps;
    const starting = this.startingClaim(waiter);
    const outcome = await leases.reserve({ ...receiverOf(waiter, this.deps.settings ?? {}), starting }, clock.now());
    if (outcome === ReserveOutcome.Reserved) {
      // With `starts`, the start is left running for the caller to await (it admits the next one meanwhile).
      const dispatched = this.dispatch(waiter, starting?.attempt);
      if (starts) starts.push(dispatched);
      else await dispatched;
      return { admitted: 1, stop: false, waiting: false };
    }
    if (outcome === ReserveOutcome.TargetGone) return { admitted: 0, stop: false, waiting: false };
    if (outcome === ReserveOutcome.Contended) {
      // Other admissions kept winning the race for a counter: stop here. The waiter keeps its place; a release, the
      // tick of a rated limit (made sure of here) or the reconciler's fill lets it in.
      // The counters are hot right now: a tick that cannot be elected either is the reconciler's to redo.
      for (const limit of gatesOf(waiterDemand(waiter))) await ensureTick(this.deps, limit).catch(() => undefined);
      return { admitted: 0, stop: true, waiting: true };
    }
    if (outcome === ReserveOutcome.TargetDone) {
      await leases.removeWaiter(waiterGate(waiter), waiter.waitKey);
      return { admitted: 0, stop: false, waiting: false };
    }
    const blocked = await blockingGate(leases, configuredDemand(waiterDemand(waiter), this.deps.settings ?? {}), clock.now());
    // Room and starts everywhere by now (freed meanwhile, or a booking lost to a concurrent one): the next round tries
    // it again, in its place.
    if (!blocked) return { admitted: 0, stop: false, waiting: true };
    // A start rate with nothing to give now: its tick lets the waiter in (and the ones behind it).
    if (!blocked.missing && blocked.rate) await ensureTick(this.deps, blocked.gate);
    // (A missing gate cannot happen: a job parks only once every gate it names exists, and gates are never deleted;
    // it would keep its place too.)
    if (blocked.gate === gate || blocked.missing) return { admitted: 0, stop: true, waiting: true };
    // Another of its limits holds it back: it waits on that limit's list from now on (not moved: let in meanwhile).
    const moved = await leases.moveWaiter(waiter, blocked.gate);
    return { admitted: moved && depth === 0 ? await this.fill(blocked.gate, depth + 1) : 0, stop: false, waiting: false };
  }

  /**
   * Starts a reserved job: here if this caller can (one hop), else (or if that failed before the start could be
   * decided) by its wake-up message. Its waiter item went in the transaction that reserved it; a crash before either
   * leaves a reservation with no message, which the reconciler re-sends after the reservation grace.
   */
  async dispatch(waiter: Waiter, attempt?: string): Promise<void> {
    const handedOffAt = this.deps.clock.now();
    if (!(this.startHere && (await this.startedHere(waiter, handedOffAt, attempt))))
      await this.deps.queue.send(waiter.body, 0, { reserved: true });
    this.deps.metrics.count(MetricName.HandOffs, 1, waiter.pool);
    this.deps.log.debug('waiting job let in', {
      jobId: waiter.jobId,
      pool: waiter.pool,
      kind: waiter.kind,
      waitedMs: handedOffAt - waiter.since,
    });
    const rank = rankOf(waiter.waitKey);
    // Fair-share rounds: a tenant arriving later starts at the round being let in now, not at round 1.
    if (rank > 0) await this.deps.leases.advanceRound(waiter.pool, rank);
  }

  /**
   * False when the start here failed unexpectedly (a store error, say): the wake-up then goes by the queue. Every step
   * of the start is fenced by the record's version, so a wake-up after a partial start is a duplicate at worst.
   */
  private async startedHere(waiter: Waiter, handedOffAt: number, attempt?: string): Promise<boolean> {
    try {
      await this.startHere!(waiter, handedOffAt, attempt);
      return true;
    } catch (error) {
      this.deps.log.warn('could not start a job handed a slot; its wake-up goes by the queue', {
        jobId: waiter.jobId,
        pool: waiter.pool,
        kind: waiter.kind,
        error: String(error),
      });
      return false;
    }
  }

  /**
   * Releases of this limit overlap: this releaser spreads on it from now on (for SPREAD_MEMORY_MS), for the rest of this
   * release too (its next read takes the whole window). It marks the list, unless the mark it knows is fresh enough, so
   * the releasers in other containers spread too before they lose a race of their own. The write goes into `marks`,
   * beside the release's next tries. The mark is a hint: a failed write is logged, and the release goes on.
   */
  private lostRace(lists: WaitList[], waiter: Waiter, marks: Array<Promise<void>>): void {
    const gate = waiterGate(waiter);
    const now = this.deps.clock.now();
    this.lostRaceAt.set(gate, now);
    lists.find((list) => list.gate === gate)!.lost(this.maxWidth);
    if (this.maxWidth <= 1 || !marksRace(this.raceMarkAt.get(gate), now)) return;
    this.raceMarkAt.set(gate, now);
    marks.push(
      this.deps.leases
        .markRace(gate, now)
        .catch((error: unknown) =>
          this.deps.log.warn('could not mark a waiting list for a lost hand-off race', { gate, error: String(error) }),
        ),
    );
  }

  /**
   * A read of the list carried its race mark (or none): kept if newer than the one known; the window to use now. A mark
   * from a clock ahead of this one counts from now, not from its future.
   */
  private toldOfRace(gate: string, racedAt: number | undefined): number {
    const known = this.raceMarkAt.get(gate);
    const at = racedAt === undefined ? undefined : Math.min(racedAt, this.deps.clock.now());
    if (at !== undefined && (known === undefined || at > known)) this.raceMarkAt.set(gate, at);
    return this.widthFor(gate);
  }

  /**
   * The start attempt a pass or a fill writes with the slot (row `receiveStarting`) when this caller starts the job
   * itself: the claim's patch, so no claim follows. A wake-up message meets the job starting (a duplicate), and if this invocation
   * dies, the reconciler sends the job again once `claimableAt` passed, as after a claim. Undefined otherwise (a
   * reservation, claimed by whoever starts it).
   */
  private startingClaim(waiter: Waiter): StartingClaim | undefined {
    const { settings, random } = this.deps;
    if (!this.startHere || !settings || !random) return undefined;
    const now = this.deps.clock.now();
    return { attempt: startAttempt(`hand-off:${waiter.jobId}`, random), claimableAt: now + settings.startGraceMs };
  }

  private widthFor(gate: string): number {
    return spreadWidth(lastRaceAt(this.lostRaceAt.get(gate), this.raceMarkAt.get(gate)), this.deps.clock.now(), this.maxWidth);
  }

  /**
   * Whether a release that failed was our own, applied with its answer lost (the SDK's retry met its effect): the job's
   * record is what the move left, so the whole transaction applied. Else another writer moved the job first. Only an
   * end carries its writer's token (wroteMove): any other move is not read for.
   */
  private wrote(move: Move): Promise<boolean> {
    return wroteMoveAfterAll(this.deps.ledger, move);
  }

  private async freeThenFill(demand: Demand, move: Move, released?: () => Promise<void>): Promise<boolean> {
    // A pass of this release that applied but came back Contended (its retries lost to other transactions) is found here.
    const freed = (await this.deps.leases.free(demand, move, this.deps.clock.now())) || (await this.wrote(move));
    // A job may have parked after we looked for waiters and before the release, seeing the limit full: let it in.
    if (freed) {
      await released?.();
      this.deps.metrics.count(MetricName.Releases, 1, demand.pool);
      for (const gate of gatesOf(demand)) await this.fill(gate);
    }
    return freed;
  }
}

/** What admitting one waiter did: how many it let in; stop: the gate has no room for it; waiting: still on the gate's list. */
interface Admitted {
  admitted: number;
  stop: boolean;
  waiting: boolean;
}

/**
 * The receiving side of a pass or reserve: the waiter's job, what it takes (as the configuration says: a pool with a
 * limit admits only onto a limited pool's counter), and its waiter item.
 */
export function receiverOf(waiter: Waiter, config: PoolConfiguration): Receiver {
  const demand = configuredDemand(waiterDemand(waiter), config);
  return { jobId: waiter.jobId, demand, gate: waiterGate(waiter), waitKey: waiter.waitKey };
}

/**
 * Every promise settled, then their values, or the first failure: none is left running when the caller fails (a
 * Lambda environment frozen after a failed invocation would resume it later, a start made past its claim).
 */
async function allDone<T>(promises: Array<Promise<T>>): Promise<T[]> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((result) => (result as PromiseFulfilledResult<T>).value);
}

/** A hand-off ticket; undefined if the store could not give one (the release then spreads by its job's id). */
function ticketOf(leases: HandOffDeps['leases'], gate: string): Promise<number | undefined> {
  return leases.handOffTicket(gate).catch(() => undefined);
}

/**
 * One gate's waiting list as a release walks it: read `candidatesToRead(width)` waiters beyond those tried, tried in
 * the order the pick rule gives (shared/domain/handOffPick.ts), each at most once. A read that returned fewer waiters
 * than it asked for saw all of them. A spreading release picks by a hand-off ticket of the gate (consecutive for
 * releases at the same time), or by its job's id if it has none. After a lost race it reads the list again before it
 * tries another waiter: what it read is as old as the race it lost, and the waiters it would try next are those that
 * releases in flight with it were likeliest to take meanwhile. A read that carries a race mark newer than what sized it
 * (another container's releaser lost a race) widens the window and reads it whole before anything is tried.
 */
class WaitList {
  private readonly passed = new Set<string>();
  private read?: Waiter[];
  private order: Waiter[] = [];
  /** the order is to be made again (a new read, or a new ticket) */
  private stale = true;
  private sawAll = false;
  private prefetchUsed = false;
  private ticket?: Promise<number | undefined>;

  constructor(
    private readonly leases: HandOffDeps['leases'],
    readonly gate: string,
    private width: number,
    private readonly jobSpread: number,
    private readonly tickets: boolean,
    /** tells the releaser of the race mark a read carried; the window to use now */
    private readonly told: (racedAt: number | undefined) => number,
    private readonly prefetched?: Prefetched,
  ) {
    this.ticket = prefetched?.ticket;
  }

  /** The first untried waiter in wait order, and the one to try next; undefined when none is left. */
  async next(): Promise<{ first: Waiter; pick: Waiter } | undefined> {
    if (!this.read) {
      if (this.prefetched && !this.prefetchUsed) {
        this.prefetchUsed = true;
        if (!this.remember(await this.prefetched.read, this.prefetched.asked)) await this.readMore();
      } else await this.readMore();
    }
    const found = await this.untried();
    if (found || this.sawAll) return found;
    await this.readMore();
    return this.untried();
  }

  /** Reads the list past what was tried; again, wider, if the read told of a race (the width only grows: twice at most). */
  private async readMore(): Promise<void> {
    for (;;) {
      const wanted = this.passed.size + candidatesToRead(this.width);
      if (this.remember(await this.leases.readWaitingList(this.gate, wanted), wanted)) return;
    }
  }

  skip(waiter: Waiter): void {
    this.passed.add(waiter.waitKey);
  }

  /**
   * The waiter tried was taken by a concurrent release: spread over `width` from now on, on a new read of the list (the
   * whole window) and a new ticket, taken after that read (the one used was another release's too; a new one is past
   * every release in flight).
   */
  lost(width: number): void {
    this.width = Math.max(this.width, width);
    this.read = undefined;
    this.ticket = undefined;
    this.stale = true;
  }

  private async untried(): Promise<{ first: Waiter; pick: Waiter } | undefined> {
    if (this.stale && this.read) {
      this.stale = false;
      // The window is taken among the waiters not tried yet (those tried are gone, or not waiting).
      const untried = this.read.filter((waiter) => !this.passed.has(waiter.waitKey));
      if (this.width > 1 && this.tickets) this.ticket ??= ticketOf(this.leases, this.gate);
      const spread = this.width > 1 ? ((await this.ticket) ?? this.jobSpread) : 0;
      this.order = handOffOrder(untried, this.width, spread, (waiter) => waiterDemand(waiter).units);
    }
    const pick = this.order.find((waiter) => !this.passed.has(waiter.waitKey));
    const first = this.read?.find((waiter) => !this.passed.has(waiter.waitKey));
    return pick && first ? { first, pick } : undefined;
  }

  /**
   * Keeps a read; false, keeping nothing, when its race mark widens the window past what it read (too narrow: read
   * again). A read that saw the whole list is kept, widened.
   */
  private remember({ waiters, racedAt }: WaitingListRead, wanted: number): boolean {
    const width = this.told(racedAt);
    if (width > this.width) {
      this.width = width;
      if (waiters.length >= wanted) {
        this.read = undefined;
        this.stale = true;
        return false;
      }
    }
    // Items written before keyed limits carry no gate: they are on this list.
    this.read = waiters.map((waiter) => ({ ...waiter, gate: waiter.gate ?? this.gate }));
    this.sawAll = waiters.length < wanted;
    this.stale = true;
    return true;
  }
}
