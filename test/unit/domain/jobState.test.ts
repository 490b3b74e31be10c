import { ADMITTABLE_STATES, canMove, isTerminal, JobState, sourcesOf, TERMINAL_STATES, TRANSITIONS } from '../../../shared/domain/jobState';

const ALL = Object.values(JobState);

describe('job states', () => {
  test('terminal states are exactly succeeded, failed, dead and cancelled; only dead moves again (to itself: a kept slot given back)', () => {
    expect([...TERMINAL_STATES].sort()).toEqual(['cancelled', 'dead', 'failed', 'succeeded']);
    expect(TRANSITIONS.cancelled).toEqual([]);
    expect(TRANSITIONS.succeeded).toEqual([]);
    expect(TRANSITIONS.failed).toEqual([]);
    expect(TRANSITIONS.dead).toEqual(['dead']);
  });

  test('isTerminal agrees with TERMINAL_STATES for every state', () => {
    for (const state of ALL) expect(isTerminal(state)).toBe(TERMINAL_STATES.includes(state));
  });

  test('every non-terminal state can reach a terminal state', () => {
    for (const start of ALL.filter((s) => !isTerminal(s))) {
      const seen = new Set<JobState>([start]);
      const frontier = [start];
      while (frontier.length) for (const next of TRANSITIONS[frontier.pop()!]) if (!seen.has(next)) (seen.add(next), frontier.push(next));
      expect([...seen].some(isTerminal)).toBe(true);
    }
  });

  test('only starting (a new attempt), running (a heartbeat) and dead (a kept slot) move to themselves', () => {
    expect(ALL.filter((state) => canMove(state, state)).sort()).toEqual(['dead', 'running', 'starting']);
  });

  test('admittable states are queued and waiting: the ones a slot may be given to', () => {
    expect([...ADMITTABLE_STATES].sort()).toEqual(['queued', 'waiting']);
    for (const state of ADMITTABLE_STATES) expect(canMove(state, 'reserved')).toBe(true);
  });

  test('a running job ends, notes a heartbeat, or goes back to queued when its run never started; never to starting', () => {
    expect([...TRANSITIONS.running].sort()).toEqual(['failed', 'queued', 'running', 'succeeded']);
    expect(canMove('running', 'starting')).toBe(false);
  });

  test('sourcesOf is the exact inverse of TRANSITIONS', () => {
    for (const to of ALL) {
      const expected = ALL.filter((from) => TRANSITIONS[from].includes(to));
      expect(sourcesOf(to).sort()).toEqual(expected.sort());
    }
    expect(sourcesOf('running').sort()).toEqual(['running', 'starting']);
    expect(sourcesOf('queued').sort()).toEqual(['running', 'scheduled', 'starting']);
    expect(sourcesOf('starting').sort()).toEqual(['queued', 'reserved', 'scheduled', 'starting', 'waiting']);
    // Only jobs that hold no slot can be cancelled; a scheduled job is never handed a slot (not admittable).
    expect(sourcesOf('cancelled').sort()).toEqual(['queued', 'scheduled', 'waiting']);
    expect(canMove('scheduled', 'reserved')).toBe(false);
  });
});
