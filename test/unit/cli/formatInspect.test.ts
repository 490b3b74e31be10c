import { formatDeadLetters, formatJob, formatJobList, formatPoolDetails, wrap } from '../../../shared/cli/formatInspect';
import { formatTop } from '../../../shared/cli/top';
import type { JobRecord } from '../../../shared/ports/jobLedger';

const NOW = Date.parse('2026-11-27T02:00:00Z');
const record = (jobId: string, spec: Record<string, unknown>, extra: Partial<JobRecord> = {}): JobRecord =>
  ({
    jobId,
    kind: spec.kind,
    pool: 'flows',
    state: 'running',
    attempts: 1,
    version: 3,
    firstSeenAt: NOW - 60_000,
    updatedAt: NOW - 5_000,
    spec: { id: jobId, pool: 'flows', ...spec },
    ...extra,
  }) as JobRecord;

describe('what a job starts is named wherever jobs are listed', () => {
  test('jobs list: a NAME column beside the kind (a set job id says nothing of its flow)', () => {
    const text = formatJobList(
      [
        record('nightly-salesforce.now-rerun-1.jdfe834a7', { kind: 'appflow', flowName: 'salesforce-accounts' }),
        record('b-2', { kind: 'sfn', stateMachineArn: 'arn:aws:states:us-east-1:123456789012:stateMachine:sluice-billing' }),
      ],
      NOW,
    ).split('\n');
    expect(text[0]).toMatch(/^JOB +POOL +KIND +NAME +STATE +ATTEMPTS/);
    expect(text[1]).toMatch(/^nightly-salesforce\.now-rerun-1\.jdfe834a7 +flows +appflow +salesforce-accounts +running +1 /);
    expect(text[2]).toMatch(/^b-2 +flows +sfn +sluice-billing +running/);
  });

  test('pool list holders, top: the next to start, from the spec they wait with', () => {
    const pools = [
      {
        name: 'flows',
        limit: 1,
        inUse: 1,
        waiting: 1,
        held: [{ jobId: 'a', kind: 'glue', target: 'sluice-nightly', since: NOW - 65_000, state: 'running', executionId: 'jr_1' }],
        next: [{ jobId: 'b', kind: 'appflow', target: 'partner-007-refresh', since: NOW - 3_000 }],
      },
    ];
    expect(formatPoolDetails(pools, NOW).split('\n').slice(-2)).toEqual([
      'POOL   HOLDER  KIND  NAME            HELD FOR  STATE    RUN',
      'flows  a       glue  sluice-nightly    1m 05s  running  jr_1',
    ]);
    expect(formatTop({ at: NOW, pools, recentJobs: [] }, 'sluice-local')).toContain(
      'NEXT TO START\nPOOL   #  JOB  KIND     NAME                 WAITING FOR\nflows  1  b    appflow  partner-007-refresh           3s',
    );
  });
});

describe('dlq list shows each reason whole', () => {
  test('under its message, wrapped at 100 columns, every word kept', () => {
    const reason = `unknown pool 'reports': create it with sluice pool set-limit reports N --create; ${'then redrive it '.repeat(12)}end`;
    const text = formatDeadLetters(
      [{ messageId: 'm-1', jobId: 'lost-1', pool: 'reports', target: 'weekly', sentAt: NOW - 12_000, body: '{}' }].map((l) => ({
        ...l,
        reason,
      })),
      NOW,
    );
    const [header, row, ...reasonLines] = text.split('\n');
    expect(header).toMatch(/^JOB +POOL +NAME +AGE +MESSAGE$/);
    expect(row).toMatch(/^lost-1 +reports +weekly +12s +m-1$/);
    expect(reasonLines.length).toBeGreaterThan(1);
    for (const line of reasonLines) {
      expect(line).toMatch(/^ {4}\S/);
      expect(line.length).toBeLessThanOrEqual(104);
    }
    expect(reasonLines.map((l) => l.trim()).join(' ')).toBe(reason.replace(/\s+/g, ' ').trim());
  });

  test('wrap: a word longer than the width has a line of its own', () => {
    expect(wrap('a bb cccccccc d', 4)).toEqual(['a bb', 'cccccccc', 'd']);
  });
});

describe('jobs show', () => {
  test('shows notBefore, and how far off it is', () => {
    const text = formatJob(
      record('later-1', { kind: 'glue', jobName: 'sluice-x', notBefore: '2026-11-27T04:30:00+01:00' }, { state: 'scheduled' }),
      NOW,
    );
    expect(text).toMatch(/\n {2}not before {2}2026-11-27T04:30:00\+01:00 \(in 1h 30m\)\n/);
  });
});

describe('text from data is printed inert', () => {
  test('escape sequences and controls in a reason or an id never reach the terminal, and columns stay aligned', () => {
    const evil = 'boom\u001b]0;pwned\u0007\u001b[2J\rX';
    const list = formatJobList([record(`x\u001b[31m`, { kind: 'glue', jobName: 'sluice-x' }, { lastError: evil })], NOW);
    expect(list).not.toMatch(/[\u001b\u0007\r]/);
    expect(list).toMatch(/boom X$/);
    const [header, row] = list.split('\n');
    expect(row!.indexOf('glue')).toBe(header!.indexOf('KIND'));
    const shown = formatJob(record('y', { kind: 'glue', jobName: 'sluice-x' }, { lastError: evil }), NOW);
    expect(shown).not.toMatch(/[\u001b\u0007\r]/);
    const letters = formatDeadLetters([{ messageId: 'm', sentAt: NOW, body: evil, reason: evil }], NOW);
    expect(letters).not.toMatch(/[\u001b\u0007\r]/);
  });
});
