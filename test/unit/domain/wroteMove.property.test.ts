import fc from 'fast-check';
import { JobState } from '../../../shared/domain/jobState';
import { endWriter } from '../../../shared/domain/startAttempt';
import { type JobRecord, type Move, moved, wroteMove } from '../../../shared/ports/jobLedger';

const record = (version: number, updatedAt: number): JobRecord => ({
  jobId: 'j1',
  pool: 'default',
  kind: 'glue',
  state: JobState.Running,
  spec: { id: 'j1', pool: 'default', kind: 'glue', jobName: 'x' } as JobRecord['spec'],
  version,
  attempts: 1,
  firstSeenAt: 0,
  updatedAt,
  executionId: 'jr_1',
});

const ends = fc.record({
  version: fc.integer({ min: 1, max: 1_000 }),
  now: fc.integer({ min: 1, max: 2 ** 40 }),
  seed: fc.integer({ min: 0, max: 2 ** 31 }),
  to: fc.constantFrom(JobState.Succeeded, JobState.Failed),
});

function endMove(version: number, to: JobState, now: number, token: string): Move {
  return { jobId: 'j1', version, to, patch: { executionId: 'jr_1', endedAt: now, endedBy: token, lastError: undefined } };
}

describe('wroteMove: a writer knows its own write when it meets it again', () => {
  test('the record a move left is that move as written', () => {
    fc.assert(
      fc.property(ends, ({ version, now, seed, to }) => {
        const move = endMove(
          version,
          to,
          now,
          endWriter(() => (seed % 1000) / 1000),
        );
        return wroteMove(moved(record(version, 0), move, now), move);
      }),
    );
  });

  test("another writer's end, even the same move at the same millisecond, is not ours (its token differs)", () => {
    fc.assert(
      fc.property(ends, ({ version, now, to }) => {
        const ours = endMove(version, to, now, 'end/ours');
        const theirs = endMove(version, to, now, 'end/theirs');
        return !wroteMove(moved(record(version, 0), theirs, now), ours);
      }),
    );
  });

  test('a move without a token is never taken for our own: it cannot be told from the same move by another writer', () => {
    fc.assert(
      fc.property(ends, ({ version, now, to }) => {
        const move: Move = { jobId: 'j1', version, to, patch: { executionId: 'jr_1', endedAt: now } };
        return !wroteMove(moved(record(version, 0), move, now), move);
      }),
    );
  });

  test('a record at another version or state, or of another job, is not the move', () => {
    const move = endMove(4, JobState.Succeeded, 100, 'end/ours');
    const after = moved(record(4, 0), move, 100);
    expect(wroteMove(after, move)).toBe(true);
    expect(wroteMove({ ...after, version: 6 }, move)).toBe(false);
    expect(wroteMove({ ...after, state: JobState.Failed }, move)).toBe(false);
    expect(wroteMove({ ...after, jobId: 'j2' }, move)).toBe(false);
    expect(wroteMove(record(4, 100), move)).toBe(false);
  });
});
