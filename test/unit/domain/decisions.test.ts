import fc from 'fast-check';
import {
  Answer,
  Because,
  GONE_GRACE_MS,
  keptSlotUntil,
  onCompletion,
  onDelivery,
  onKeptSlot,
  onRunCheck,
  onStartFailure,
  type RunAnswer,
} from '../../../shared/domain/decisions';
import { JobState } from '../../../shared/domain/jobState';
import { allows, PROTOCOL } from '../../../shared/domain/protocol';

const NOW = 1_000_000;

describe('decisions of the lease protocol', () => {
  test('a delivery takes a queued job, claims a reserved one, ignores waiting, running and finished ones', () => {
    expect(onDelivery({ state: 'queued' }, NOW)).toEqual({ step: 'take' });
    expect(onDelivery({ state: 'reserved' }, NOW)).toEqual({ step: 'claim' });
    for (const state of ['waiting', 'running', 'succeeded', 'failed', 'dead'] as const)
      expect(onDelivery({ state }, NOW)).toHaveProperty('duplicate');
  });

  test('a job being started is resumed only once its attempt is presumed dead, even by the same message', () => {
    const starting = { state: JobState.Starting, attempt: 'm1', claimableAt: NOW + 1 };
    // SQS may deliver one message twice at once: its own message id must not let a second live attempt in.
    expect(onDelivery(starting, NOW)).toEqual({ duplicate: 'being started now' });
    expect(onDelivery(starting, NOW + 1)).toEqual({ step: 'resume' });
  });

  test('every delivery decision names a protocol step its state allows', () => {
    fc.assert(
      fc.property(fc.constantFrom(...Object.values(JobState)), fc.integer(), (state, claimableAt) => {
        const decision = onDelivery({ state, attempt: 'x', claimableAt }, 0);
        if ('step' in decision) expect(allows(decision.step, state)).toBe(true);
      }),
    );
  });

  test.each([
    // permanent, definite, may have started before, budget left -> step
    [true, true, false, true, 'giveUp'],
    [true, true, true, true, 'giveUpKeep'],
    [false, true, false, true, 'backoff'],
    [false, true, true, true, 'hold'],
    [false, false, false, true, 'hold'],
    [false, true, false, false, 'giveUp'],
    [false, false, false, false, 'giveUpKeep'],
  ] as const)('start failure permanent=%p definite=%p before=%p budget=%p -> %s', (permanent, definite, before, budget, step) => {
    expect(onStartFailure({ permanent, definite }, before, budget)).toBe(step);
  });

  test('a slot is freed on a start failure only when no run can exist (property)', () => {
    fc.assert(
      fc.property(fc.boolean(), fc.boolean(), fc.boolean(), fc.boolean(), (permanent, definite, before, budget) => {
        const step = onStartFailure({ permanent, definite }, before, budget);
        const mayHaveStarted = before || (!permanent && !definite);
        expect(PROTOCOL[step].slot === 'release').toBe(!mayHaveStarted);
      }),
    );
  });

  test('a completion completes its own run, gives a kept slot back, and ignores another run', () => {
    expect(onCompletion({ state: 'running', executionId: 'r1' }, 'r1')).toEqual({ step: 'complete' });
    expect(onCompletion({ state: 'starting' }, 'r1')).toEqual({ step: 'complete' });
    expect(onCompletion({ state: 'dead', lease: {}, executionId: 'r1' }, 'r1')).toEqual({ step: 'giveBack' });
    expect(onCompletion({ state: 'succeeded', executionId: 'r1' }, 'r1')).toEqual({ done: true });
    expect(onCompletion({ state: 'running', executionId: 'r2' }, 'r1')).toHaveProperty('ignore');
    expect(onCompletion({ state: 'waiting' }, 'r1')).toHaveProperty('ignore');
  });

  test('a second end of a run the job was queued again for (it never started) is done, even while the next attempt starts', () => {
    expect(onCompletion({ state: 'starting', executionId: 'r1', replacesRun: 'r1' }, 'r1')).toEqual({ done: true });
    expect(onCompletion({ state: 'queued', executionId: 'r1', replacesRun: 'r1' }, 'r1')).toEqual({ done: true });
    // The next run's own end completes it.
    expect(onCompletion({ state: 'running', executionId: 'r2', replacesRun: 'r1' }, 'r2')).toEqual({ step: 'complete' });
  });
});

describe('a running job at the reconciler (onRunCheck)', () => {
  const HOUR = 3600_000;
  const base = { startedAt: NOW - 2 * HOUR, now: NOW, maxRunMs: HOUR };
  const answers: RunAnswer[] = [{ ended: 'succeeded' }, { ended: 'failed' }, Answer.Gone, Answer.Going, Answer.Unanswered];

  test('an ended run completes with its outcome, whatever its age', () => {
    expect(onRunCheck({ ...base, answer: { ended: 'succeeded' } })).toEqual({ step: 'complete', outcome: 'succeeded', why: Because.Ended });
    expect(onRunCheck({ ...base, startedAt: NOW, answer: { ended: 'failed' } })).toEqual({
      step: 'complete',
      outcome: 'failed',
      why: Because.Ended,
    });
  });

  test('a run past its maximum that goes on, or cannot be asked about, keeps its slot and is overdue', () => {
    for (const answer of [Answer.Going, Answer.Unanswered])
      expect(onRunCheck({ ...base, answer })).toEqual({ keep: true, overdue: { ranMs: 2 * HOUR, maxRunMs: HOUR } });
    expect(onRunCheck({ ...base, startedAt: NOW - HOUR, answer: Answer.Going })).toEqual({ keep: true });
  });

  test('"gone" frees the slot only for a run recorded at least the grace ago (or its maximum run time, if shorter)', () => {
    const long = { now: NOW, maxRunMs: 48 * HOUR, answer: Answer.Gone };
    expect(onRunCheck({ ...long, startedAt: NOW - GONE_GRACE_MS + 1 })).toEqual({ keep: true });
    expect(onRunCheck({ ...long, startedAt: NOW - GONE_GRACE_MS })).toEqual({ step: 'complete', outcome: 'failed', why: Because.Gone });
    const short = { now: NOW, maxRunMs: 60_000, answer: Answer.Gone };
    expect(onRunCheck({ ...short, startedAt: NOW - 59_999 })).toEqual({ keep: true });
    expect(onRunCheck({ ...short, startedAt: NOW - 60_000 })).toMatchObject({ step: 'complete', why: Because.Gone });
  });

  test('a judged run (no API: a callback job) ends at its own deadline, capped by its maximum run time', () => {
    const judged = (at: number) => ({
      ...base,
      startedAt: NOW - 10_000,
      answer: Answer.Going,
      judged: { deadline: { at, reason: 'timed out' } },
    });
    expect(onRunCheck(judged(NOW))).toEqual({ keep: true });
    expect(onRunCheck(judged(NOW - 1))).toEqual({ step: 'complete', outcome: 'failed', why: Because.Deadline, reason: 'timed out' });
    // its own deadline after its maximum: the maximum ends it
    const capped = { ...base, answer: Answer.Going, judged: { deadline: { at: NOW + HOUR, reason: 'timed out' } } };
    expect(onRunCheck(capped)).toEqual({
      step: 'complete',
      outcome: 'failed',
      why: Because.Deadline,
      reason: 'exceeded the maximum run time of 3600 s',
    });
    expect(onRunCheck({ ...base, answer: Answer.Going, judged: {} })).toMatchObject({ why: Because.Deadline });
  });

  test("an API kind's slot is released only when the run ended or the API has long not known it (property)", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...answers),
        fc.integer({ min: 0, max: 100 * HOUR }),
        fc.integer({ min: 1, max: 50 * HOUR }),
        (answer, age, maxRunMs) => {
          const decision = onRunCheck({ answer, now: NOW, startedAt: NOW - age, maxRunMs });
          const released = 'step' in decision;
          const ended = typeof answer === 'object';
          const goneLongEnough = answer === Answer.Gone && age >= Math.min(GONE_GRACE_MS, maxRunMs);
          expect(released).toBe(ended || goneLongEnough);
          if (!released) expect(decision.overdue !== undefined).toBe(age > maxRunMs);
        },
      ),
    );
  });
});

describe('a dead job keeping its slot at the reconciler (onKeptSlot)', () => {
  const maxRunMs = 3600_000;

  test('no run id known (nothing to ask), or a judged kind: given back at leaseUntil, not before', () => {
    expect(onKeptSlot({ now: NOW, leaseUntil: NOW + 1, maxRunMs })).toEqual({ keep: true });
    expect(onKeptSlot({ now: NOW, leaseUntil: NOW, maxRunMs })).toEqual({ step: 'giveBack', why: 'leaseUntil passed' });
  });

  test('its run known: given back when it ended or the API has long not known it; kept (overdue) past leaseUntil while it goes on', () => {
    const known = { now: NOW, leaseUntil: NOW - 1, startedAt: NOW - 2 * maxRunMs, maxRunMs };
    expect(onKeptSlot({ ...known, answer: { ended: 'failed' } })).toMatchObject({ step: 'giveBack' });
    expect(onKeptSlot({ ...known, answer: Answer.Gone })).toMatchObject({ step: 'giveBack' });
    expect(onKeptSlot({ ...known, answer: Answer.Gone, startedAt: NOW })).toEqual({ keep: true, overdue: { ranMs: 0, maxRunMs } });
    for (const answer of [Answer.Going, Answer.Unanswered])
      expect(onKeptSlot({ ...known, answer })).toEqual({ keep: true, overdue: { ranMs: 2 * maxRunMs, maxRunMs } });
    expect(onKeptSlot({ ...known, leaseUntil: NOW + 1, answer: Answer.Going })).toEqual({ keep: true });
  });

  test("keptSlotUntil: the kind's maximum, or the run's own deadline when sooner", () => {
    expect(keptSlotUntil(NOW, maxRunMs)).toBe(NOW + maxRunMs);
    expect(keptSlotUntil(NOW, maxRunMs, { at: NOW + 60_000 })).toBe(NOW + 60_000);
    expect(keptSlotUntil(NOW, maxRunMs, { at: NOW + 2 * maxRunMs })).toBe(NOW + maxRunMs);
  });
});
