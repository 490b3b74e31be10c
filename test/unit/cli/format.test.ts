import { formatEnqueueReport, formatPoolTable, formatSetLimit } from '../../../shared/cli/format';

describe('formatPoolTable', () => {
  test('one row per pool, sorted by name, numbers right-aligned, free never negative', () => {
    const text = formatPoolTable([
      { name: 'etl', limit: 2, inUse: 3, waiting: 140, holders: ['a', 'b', 'c'] },
      { name: 'default', limit: 8, inUse: 3, waiting: 0, holders: ['x', 'y', 'z'] },
      { name: 'crm-nightly', limit: 12, inUse: 0, waiting: 7, holders: [] },
    ]);
    expect(text.split('\n')).toEqual([
      'POOL         LIMIT  IN USE  FREE  WAITING',
      'crm-nightly     12       0    12        7',
      'default          8       3     5        0',
      'etl              2       3     0      140',
    ]);
  });

  test('no pools says so', () => {
    expect(formatPoolTable([])).toMatch(/^no pools yet/);
  });
});

describe('formatSetLimit', () => {
  test.each([
    [4, 2, 'pool etl: limit 4, 2 waiting jobs let in'],
    [4, 1, 'pool etl: limit 4, 1 waiting job let in'],
    [1, 0, 'pool etl: limit 1, 0 waiting jobs let in'],
  ])('limit %i, %i admitted', (limit, admitted, text) => {
    expect(formatSetLimit('etl', limit, admitted)).toBe(text);
  });

  test('limit 0 says the pool is paused and running jobs go on', () => {
    expect(formatSetLimit('etl', 0, 0)).toBe('pool etl: limit 0, paused (running jobs go on; no new starts until the limit is raised)');
  });
});

describe('formatEnqueueReport', () => {
  test('sent ids on stdout, nothing on stderr when all went', () => {
    expect(formatEnqueueReport({ sent: ['a', 'b'], rejected: [] }, 'https://q')).toEqual({
      stdout: 'sent 2 jobs to https://q\n  a\n  b',
      stderr: '',
    });
  });

  test('rejects on stderr, by 1-based position in the file, in file order', () => {
    const out = formatEnqueueReport(
      {
        sent: ['a'],
        rejected: [
          { index: 3, reason: 'kind: Invalid input' },
          { index: 0, reason: 'id: too long' },
        ],
      },
      'https://q',
    );
    expect(out.stdout).toBe('sent 1 job to https://q\n  a');
    expect(out.stderr).toBe('rejected 2 specs (not sent):\n  spec 1: id: too long\n  spec 4: kind: Invalid input');
  });
});
