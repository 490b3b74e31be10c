import { canMove, isTerminal, JobState, sourcesOf, STARTABLE_STATES, TERMINAL_STATES, TRANSITIONS } from '../../../shared/domain/jobState';

const ALL = Object.values(JobState);

describe('job states', () => {
  test('terminal states are exactly succeeded, failed and dead, and have no exits', () => {
    expect([...TERMINAL_STATES].sort()).toEqual(['dead', 'failed', 'succeeded']);
    for (const terminal of TERMINAL_STATES) {
      expect(TRANSITIONS[terminal]).toEqual([]);
      for (const to of ALL) expect(canMove(terminal, to)).toBe(false);
    }
  });

  test('isTerminal agrees with TERMINAL_STATES for every state', () => {
    for (const state of ALL) expect(isTerminal(state)).toBe(TERMINAL_STATES.includes(state));
  });

  test('every non-terminal state can reach a terminal state', () => {
    for (const start of ALL.filter((s) => !isTerminal(s))) {
      const seen = new Set<JobState>([start]);
      const frontier = [start];
      while (frontier.length) for (const next of TRANSITIONS[frontier.pop()!]) if (!seen.has(next)) seen.add(next), frontier.push(next);
      expect([...seen].some(isTerminal)).toBe(true);
    }
  });

  test('no state moves to itself', () => {
    for (const state of ALL) expect(canMove(state, state)).toBe(false);
  });

  test('startable states are queued and waiting, and both may move to starting', () => {
    expect([...STARTABLE_STATES].sort()).toEqual(['queued', 'waiting']);
    for (const state of STARTABLE_STATES) expect(canMove(state, 'starting')).toBe(true);
  });

  test('a running job only ends; it never goes back to queued or starting', () => {
    expect([...TRANSITIONS.running].sort()).toEqual(['failed', 'succeeded']);
    expect(canMove('running', 'starting')).toBe(false);
    expect(canMove('running', 'queued')).toBe(false);
  });

  test('only a start that failed transiently goes back to queued', () => {
    expect(sourcesOf('queued')).toEqual(['starting']);
  });

  test('sourcesOf is the exact inverse of TRANSITIONS', () => {
    for (const to of ALL) {
      const expected = ALL.filter((from) => TRANSITIONS[from].includes(to));
      expect(sourcesOf(to).sort()).toEqual(expected.sort());
    }
    expect(sourcesOf('running')).toEqual(['starting']);
    expect(sourcesOf('dead').sort()).toEqual(['queued', 'starting', 'waiting']);
    expect(sourcesOf('starting').sort()).toEqual(['queued', 'waiting']);
  });
});
