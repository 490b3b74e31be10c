import fc from 'fast-check';
import { keepsSlot, onCompletion, onDelivery, onStartFailure } from '../../../shared/domain/decisions';
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

  test('a dead job keeps its slot only until leaseUntil', () => {
    const lease = { pool: 'p', since: 0 };
    expect(keepsSlot({ state: 'dead', lease, leaseUntil: NOW + 1 }, NOW)).toBe(true);
    expect(keepsSlot({ state: 'dead', lease, leaseUntil: NOW }, NOW)).toBe(false);
    expect(keepsSlot({ state: 'dead', leaseUntil: NOW + 1 }, NOW)).toBe(false);
    expect(keepsSlot({ state: 'running', lease }, NOW)).toBe(false);
  });

  test('a completion completes its own run, gives a kept slot back, and ignores another run', () => {
    expect(onCompletion({ state: 'running', executionId: 'r1' }, 'r1')).toEqual({ step: 'complete' });
    expect(onCompletion({ state: 'starting' }, 'r1')).toEqual({ step: 'complete' });
    expect(onCompletion({ state: 'dead', lease: {}, executionId: 'r1' }, 'r1')).toEqual({ step: 'giveBack' });
    expect(onCompletion({ state: 'succeeded', executionId: 'r1' }, 'r1')).toEqual({ done: true });
    expect(onCompletion({ state: 'running', executionId: 'r2' }, 'r1')).toHaveProperty('ignore');
    expect(onCompletion({ state: 'waiting' }, 'r1')).toHaveProperty('ignore');
  });
});
