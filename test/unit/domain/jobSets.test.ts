import fc from 'fast-check';
import { itemSize, MAX_ITEM_BYTES } from '../../../shared/adapters/dynamodb/itemSize';
import { setRunItem } from '../../../shared/adapters/dynamodb/setRunStore';
import { MAX_PUT_EVENTS_ENTRY_BYTES, putEventsEntrySize } from '../../../shared/adapters/eventbridge/entrySize';
import { completionDetail } from '../../../shared/app/jobSets';
import {
  jobIdsOfRun,
  jobsOfRun,
  MAX_JOBS_PER_SET,
  MAX_LISTED_FAILED_IDS,
  runOfInvocation,
  runOfScheduledTime,
  setJobId,
} from '../../../shared/domain/jobSets';
import { SLUICE_EVENT_SOURCE, SluiceDetailType } from '../../../shared/ports/eventPublisher';
import type { SetRun } from '../../../shared/ports/setRunStore';
import { InvalidJobSetsError } from '../../../shared/errors';
import { JobSpecSchema } from '../../../shared/kinds/registry';
import { loadJobSets, parseJobSetsText } from '../../../shared/config/jobSetsFile';

const daily = (jobs: string) => `
sets:
  - name: daily-flows
    schedule: cron(0 2 * * ? *)
    timezone: Europe/Paris
    pool: flows
    jobs:
${jobs}`;

describe('job sets file', () => {
  test('a valid set: its jobs get the set pool, keys from what they start unless given, and validated specs', () => {
    const [set] = parseJobSetsText(
      daily('      - { kind: appflow, flowName: orders }\n      - { kind: glue, jobName: nightly, key: glue-nightly, pool: etl }'),
      'jobs.yml',
    );
    expect(set).toMatchObject({ name: 'daily-flows', schedule: 'cron(0 2 * * ? *)', timezone: 'Europe/Paris', enabled: true });
    expect(set!.jobs.map((j) => [j.key, j.spec.pool])).toEqual([
      ['orders', 'flows'],
      ['glue-nightly', 'etl'],
    ]);
    expect(jobIdsOfRun(set!, 'now-rerun-1')).toEqual(['daily-flows.now-rerun-1.orders', 'daily-flows.now-rerun-1.glue-nightly']);
  });

  test('YAML anchors and merge keys (<<) read as serverless.yml reads them: shared settings written once', () => {
    const merged = parseJobSetsText(
      `
glue: &glue { kind: glue, pool: etl, arguments: { '--env': prod } }
sets:
  - name: daily
    schedule: cron(0 2 * * ? *)
    jobs:
      - { <<: *glue, jobName: compact }
      - { <<: *glue, jobName: export, pool: reports }
`,
      'jobs.yml',
    );
    const written = parseJobSetsText(
      `
sets:
  - name: daily
    schedule: cron(0 2 * * ? *)
    jobs:
      - { kind: glue, pool: etl, arguments: { '--env': prod }, jobName: compact }
      - { kind: glue, pool: reports, arguments: { '--env': prod }, jobName: export }
`,
      'jobs.yml',
    );
    expect(merged).toEqual(written);
  });

  test("a job without a key is keyed by its target's name, made a valid key, where that name is its own in the set", () => {
    const long = 'sluice-' + 'x'.repeat(45);
    const [set] = parseJobSetsText(
      daily(
        [
          '      - { kind: appflow, flowName: "orders.daily@v2" }',
          '      - { kind: sfn, stateMachineArn: "arn:aws:states:us-east-1:123456789012:stateMachine:sluice-billing" }',
          '      - { kind: ecs, cluster: c, taskDefinition: "arn:aws:ecs:us-east-1:123456789012:task-definition/sluice-etl:3", launchType: FARGATE, networkConfiguration: { awsvpcConfiguration: { subnets: [subnet-1] } } }',
          // one Glue job twice, with other arguments: its name is no one's own, so both are keyed by their content
          "      - { kind: glue, jobName: sluice-load, arguments: { '--day': '1' } }",
          "      - { kind: glue, jobName: sluice-load, arguments: { '--day': '2' } }",
          // a name another job has as its key
          '      - { kind: appflow, flowName: taken }',
          '      - { kind: appflow, flowName: other, key: taken }',
          // two names alike in their first 40 characters
          `      - { kind: appflow, flowName: ${long}a }`,
          `      - { kind: appflow, flowName: ${long}b }`,
          // a name that reads as a content key
          '      - { kind: appflow, flowName: j0123abcd }',
          "      - { kind: glue, jobName: '_leading' }",
        ].join('\n'),
      ),
      'jobs.yml',
    );
    const keys = set!.jobs.map((j) => j.key);
    const hashed = /^j[0-9a-f]{8}$/;
    expect(keys.slice(0, 3)).toEqual(['orders-daily-v2', 'sluice-billing', 'sluice-etl-3']);
    expect(keys[3]).toMatch(hashed);
    expect(keys[4]).toMatch(hashed);
    expect(keys[3]).not.toBe(keys[4]);
    expect(keys[5]).toMatch(hashed);
    expect(keys[6]).toBe('taken');
    expect(keys[7]).toMatch(hashed);
    expect(keys[8]).toMatch(hashed);
    expect(keys[9]).toMatch(hashed);
    expect(keys[9]).not.toBe('j0123abcd');
    expect(keys[10]).toBe('leading');
  });

  test('a set whose jobs have keys keeps them: the example file of 120 flows, its ids unchanged', () => {
    const [daily] = loadJobSets('docs/examples/jobs.yml');
    expect(jobIdsOfRun(daily!, '20261127T0100Z').slice(0, 2)).toEqual([
      'daily-flows.20261127T0100Z.partner-001',
      'daily-flows.20261127T0100Z.partner-002',
    ]);
  });

  test('property: every key is a valid key, distinct in its set, the same on every read', () => {
    // Glue job names (any of 1-255 characters, a few ASCII controls aside); distinct arguments keep each job its own.
    const name = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9 .@#_:/-]{0,60}$/);
    fc.assert(
      fc.property(fc.array(fc.record({ name, keyed: fc.boolean() }), { minLength: 1, maxLength: 12 }), (jobs) => {
        const lines = jobs.map(
          (j, i) => `      - { kind: glue, jobName: "${j.name}", arguments: { '--n': '${i}' }${j.keyed ? `, key: k${i}` : ''} }`,
        );
        const text = daily(lines.join('\n'));
        const [set] = parseJobSetsText(text, 'jobs.yml');
        const keys = set!.jobs.map((j) => j.key);
        for (const key of keys) expect(key).toMatch(/^[A-Za-z0-9][A-Za-z0-9_-]{0,39}$/);
        expect(new Set(keys).size).toBe(keys.length);
        expect(parseJobSetsText(text, 'jobs.yml')[0]!.jobs.map((j) => j.key)).toEqual(keys);
      }),
    );
  });

  test.each([
    ['a job that is not a valid job', daily('      - { kind: appflow }'), "jobs.yml: set 'daily-flows', job 1: flowName"],
    ['a job with an id', daily('      - { id: x, kind: appflow, flowName: a }'), "set 'daily-flows', job 1: a job of a set has no id"],
    [
      'the same job twice',
      daily('      - { kind: appflow, flowName: a }\n      - { kind: appflow, flowName: a }'),
      'job 2: the same job as job 1',
    ],
    [
      'a key twice',
      daily('      - { kind: appflow, flowName: a, key: k }\n      - { kind: appflow, flowName: b, key: k }'),
      "job 2: key 'k' is job 1's too",
    ],
    [
      'a bad schedule',
      'sets:\n  - { name: s, schedule: every day, jobs: [{ kind: appflow, flowName: a }] }',
      "set 's': schedule: schedule must be",
    ],
    [
      'a bad time zone',
      'sets:\n  - { name: s, schedule: rate(1 day), timezone: Mars/Base, jobs: [{ kind: appflow, flowName: a }] }',
      "set 's': timezone",
    ],
    [
      'two sets of one name',
      'sets:\n  - { name: s, schedule: rate(1 day), jobs: [{ kind: appflow, flowName: a }] }\n  - { name: s, schedule: rate(1 day), jobs: [{ kind: appflow, flowName: b }] }',
      "set 's': another set has this name",
    ],
    ['not YAML', 'sets: [', 'jobs.yml: not valid YAML'],
  ])('%s is refused with an error naming the set and the job', (_what, text, message) => {
    expect(() => parseJobSetsText(text, 'jobs.yml')).toThrow(InvalidJobSetsError);
    expect(() => parseJobSetsText(text, 'jobs.yml')).toThrow(message);
  });

  test(`a set of more than ${MAX_JOBS_PER_SET} jobs is refused`, () => {
    const jobs = Array.from({ length: MAX_JOBS_PER_SET + 1 }, (_, i) => `      - { kind: appflow, flowName: f${i} }`).join('\n');
    expect(() => parseJobSetsText(daily(jobs), 'jobs.yml')).toThrow(`at most ${MAX_JOBS_PER_SET} jobs`);
  });

  test('an empty file declares no sets', () => {
    expect(parseJobSetsText('', 'jobs.yml')).toEqual([]);
    expect(parseJobSetsText('sets: []', 'jobs.yml')).toEqual([]);
  });
});

describe('runs and their job ids', () => {
  test('a run is named by its scheduled time to the minute (UTC), or by the invocation id of a run by hand', () => {
    expect(runOfScheduledTime('2026-11-27T01:00:00Z')).toBe('20261127T0100Z');
    expect(runOfScheduledTime('2026-11-27T02:00:00+01:00')).toBe('20261127T0100Z');
    expect(runOfInvocation('abc-1')).toBe('now-abc-1');
    expect(() => runOfScheduledTime('tomorrow')).toThrow(InvalidJobSetsError);
    expect(() => runOfInvocation('a b')).toThrow(InvalidJobSetsError);
  });

  test('property: the ids of a run are valid job ids, distinct, the same each time, and different from any other run', () => {
    const name = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$/);
    const flow = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,30}$/);
    fc.assert(
      fc.property(
        name,
        fc.uniqueArray(flow, { minLength: 1, maxLength: 20 }),
        fc.date({ min: new Date(0), max: new Date(4e12), noInvalidDate: true }),
        fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/),
        (setName, flows, at, invocation) => {
          const text = `sets:\n  - name: "${setName}"\n    schedule: rate(1 day)\n    jobs:\n${flows.map((f) => `      - { kind: appflow, flowName: "${f}" }`).join('\n')}`;
          const [set] = parseJobSetsText(text, 'jobs.yml');
          for (const run of [runOfScheduledTime(at.toISOString()), runOfInvocation(invocation)]) {
            const jobs = jobsOfRun(set!, run);
            for (const job of jobs) expect(JobSpecSchema.safeParse(job).success).toBe(true);
            expect(new Set(jobs.map((j) => j.id)).size).toBe(flows.length);
            expect(jobIdsOfRun(set!, run)).toEqual(jobs.map((j) => j.id));
            expect(jobsOfRun(parseJobSetsText(text, 'jobs.yml')[0]!, run).map((j) => j.id)).toEqual(jobs.map((j) => j.id));
          }
          const other = runOfScheduledTime(new Date(at.getTime() + 60_000).toISOString());
          const ids = new Set(jobIdsOfRun(set!, runOfScheduledTime(at.toISOString())));
          expect(jobIdsOfRun(set!, other).some((id) => ids.has(id))).toBe(false);
        },
      ),
    );
  });
});

describe('sizes: every run item and completion event fits, by construction', () => {
  // The longest names the rules allow (each checked against the parser, one character more refused).
  const SET = 'S'.repeat(48);
  const KEY = (i: number) => `K${String(i).padStart(39, '0')}`;
  const RUN = runOfInvocation('I'.repeat(32));
  const parsesWith = (name: string, key: string) => {
    try {
      parseJobSetsText(
        `sets:\n  - { name: ${name}, schedule: rate(1 day), jobs: [{ kind: appflow, flowName: f, key: ${key} }] }\n`,
        'jobs.yml',
      );
      return true;
    } catch {
      return false;
    }
  };
  const worstRun = (): SetRun => {
    const keys = Array.from({ length: MAX_JOBS_PER_SET }, (_, i) => KEY(i));
    const failedIds = keys.slice(0, MAX_LISTED_FAILED_IDS).map((key) => setJobId(SET, RUN, key));
    const ms = 9_999_999_999_999; // 13 significant digits: a time in ms until the year 2286
    return {
      set: SET,
      run: RUN,
      total: MAX_JOBS_PER_SET,
      keys,
      ended: 99_999_999, // a hint: jobs counted twice can push it past the total
      startedAt: ms,
      scheduledFor: ms,
      completedAt: ms,
      checkedAt: ms,
      notifiedAt: ms,
      summary: { total: MAX_JOBS_PER_SET, succeeded: 0, failed: MAX_JOBS_PER_SET, open: 0, failedIds },
    };
  };

  test("the limits the worst case assumes are the parser's", () => {
    expect(parsesWith(SET, KEY(0))).toBe(true);
    expect(parsesWith(`${SET}x`, KEY(0))).toBe(false);
    expect(parsesWith(SET, `${KEY(0)}x`)).toBe(false);
    expect(() => runOfInvocation('I'.repeat(33))).toThrow(InvalidJobSetsError);
    expect(RUN.length).toBeGreaterThan(runOfScheduledTime('2026-11-27T02:00:00Z').length);
    expect(setJobId(SET, RUN, KEY(0))).toHaveLength(126);
  });

  test("the largest run item, completed with every job failed, is well under DynamoDB's 400 KB", () => {
    const size = itemSize(setRunItem(worstRun()));
    expect(size).toBeLessThan(MAX_ITEM_BYTES);
    expect(size).toBeLessThan(225 * 1024); // room left: the keys take 205 KB of it
  });

  test("the largest completion event is well under PutEvents' 256 KB", () => {
    const run = worstRun();
    const entry = {
      Source: SLUICE_EVENT_SOURCE,
      DetailType: SluiceDetailType.SetRunCompleted,
      Detail: JSON.stringify(completionDetail(run, run.summary!)),
      Time: new Date(),
    };
    expect(putEventsEntrySize(entry)).toBeLessThan(MAX_PUT_EVENTS_ENTRY_BYTES / 10);
    // however many ids a summary is given, the event lists at most MAX_LISTED_FAILED_IDS
    const all = run.keys.map((key) => setJobId(SET, RUN, key));
    expect((completionDetail(run, { ...run.summary!, failedIds: all }).failedIds as string[]).length).toBe(MAX_LISTED_FAILED_IDS);
  });
});
