import fc from 'fast-check';
import { gateWait, type GateWaitState, summarizeWaits, WaitCause } from '../../../shared/domain/stuckPools';
import { eligibleSinceOf, waitKey } from '../../../shared/domain/waiting';

const NOW = 1_767_225_600_000;
const MINUTE = 60_000;
/** Every limit's wait, summed up for the stage (as the reconciler's gauges do). */
const stage = (states: GateWaitState[], now: number) => summarizeWaits(states.map((s) => gateWait(s, now)));
const state = (over: Partial<GateWaitState>): GateWaitState => ({ gate: 'etl', limit: 2, inUse: 2, waiting: 1, ...over });

const gateState = fc.record({
  gate: fc.stringMatching(/^[a-z]{1,8}$/),
  limit: fc.integer({ min: 0, max: 10 }),
  inUse: fc.integer({ min: 0, max: 12 }),
  waiting: fc.integer({ min: 0, max: 5 }),
  firstInLineSince: fc.option(fc.integer({ min: NOW - 30 * 86_400_000, max: NOW + MINUTE }), { nil: undefined }),
});

describe('why and how long jobs wait on a limit', () => {
  test('nothing waits: no wait, whatever the limit (a paused pool with no job is not stuck)', () => {
    expect(gateWait(state({ waiting: 0, firstInLineSince: NOW - 60 * MINUTE }), NOW)).toBeUndefined();
    expect(gateWait(state({ limit: 0, inUse: 0, waiting: 0 }), NOW)).toBeUndefined();
  });

  test.each([
    ['paused (limit 0)', { limit: 0, inUse: 0 }, WaitCause.Paused],
    ['paused with slots still held from before', { limit: 0, inUse: 1 }, WaitCause.Paused],
    ['full', { limit: 2, inUse: 2 }, WaitCause.Full],
    ['over a lowered limit', { limit: 1, inUse: 3 }, WaitCause.Full],
    ['slots free', { limit: 3, inUse: 1 }, WaitCause.SlotsFree],
  ])('%s', (_, over, cause) => {
    expect(gateWait(state({ ...over, firstInLineSince: NOW - 90_500 }), NOW)).toEqual({ gate: 'etl', cause, waitSeconds: 90 });
  });

  test('the first in line not read (index lag) or not due yet: 0 seconds, never negative', () => {
    expect(gateWait(state({ firstInLineSince: undefined }), NOW)?.waitSeconds).toBe(0);
    expect(gateWait(state({ firstInLineSince: NOW + 5_000 }), NOW)?.waitSeconds).toBe(0);
  });
});

describe("the stage's summary (the pool-stuck alarm's metric)", () => {
  test('the longest wait over every limit, the paused limits with waiting jobs, and which limit waits longest', () => {
    const summary = stage(
      [
        state({ gate: 'etl', firstInLineSince: NOW - 10 * MINUTE }),
        state({ gate: 'crm', limit: 0, inUse: 0, firstInLineSince: NOW - 2 * MINUTE }),
        state({ gate: 'key/org:acme', limit: 1, inUse: 1, firstInLineSince: NOW - 45 * MINUTE }),
        state({ gate: 'idle', limit: 0, inUse: 0, waiting: 0 }),
      ],
      NOW,
    );
    expect(summary).toEqual({
      oldestWaitSeconds: 45 * 60,
      pausedWithWaiting: 1,
      longest: { gate: 'key/org:acme', cause: WaitCause.Full, waitSeconds: 45 * 60 },
    });
  });

  test('no limit, or nothing waiting: 0 (the alarm recovers)', () => {
    expect(stage([], NOW)).toEqual({ oldestWaitSeconds: 0, pausedWithWaiting: 0 });
    expect(stage([state({ waiting: 0, firstInLineSince: NOW - 99 * MINUTE })], NOW)).toEqual({
      oldestWaitSeconds: 0,
      pausedWithWaiting: 0,
    });
  });

  test('the oldest wait is the largest wait of a limit with waiting jobs; limits with none never count', () => {
    fc.assert(
      fc.property(fc.array(gateState, { maxLength: 12 }), (states) => {
        const summary = stage(states, NOW);
        const waits = states.filter((s) => s.waiting > 0).map((s) => gateWait(s, NOW)!.waitSeconds);
        expect(summary.oldestWaitSeconds).toBe(Math.max(0, ...waits));
        expect(summary.pausedWithWaiting).toBe(states.filter((s) => s.waiting > 0 && s.limit === 0).length);
        if (summary.longest) expect(summary.longest.waitSeconds).toBe(summary.oldestWaitSeconds);
        else expect(waits).toEqual([]);
      }),
    );
  });

  test('nothing let in: the oldest wait only grows as time passes', () => {
    fc.assert(
      fc.property(fc.array(gateState, { maxLength: 8 }), fc.integer({ min: 0, max: 86_400_000 }), (states, later) => {
        expect(stage(states, NOW + later).oldestWaitSeconds).toBeGreaterThanOrEqual(stage(states, NOW).oldestWaitSeconds);
      }),
    );
  });
});

describe('when the first in line could first run, from its wait key', () => {
  test('the time the key was made with, whatever its priority, round and id', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 99_999_999_999_999 }),
        fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:#-]{0,20}$/),
        fc.integer({ min: -1_000_000, max: 1_000_000 }),
        fc.nat(1_000_000),
        (at, id, priority, rank) => expect(eligibleSinceOf(waitKey(at, id, { priority, rank }))).toBe(at),
      ),
    );
  });

  test('a key of another shape: undefined', () => {
    expect(eligibleSinceOf('000#w1')).toBeUndefined();
    expect(eligibleSinceOf('a#b#c#d')).toBeUndefined();
  });
});
