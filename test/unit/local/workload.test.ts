import { JobSpecSchema } from '../../../shared/kinds/registry';
import { DEFAULT_WORKLOAD, kindShares, makeWorkload } from '../../../local/workload';
import { byKindOf } from '../../../local/summary';
import type { SimRun } from '../../../local/simulators';

describe('the sample workload', () => {
  test('Glue gets --glue-share, the other kinds split the rest; alone, a kind gets every job', () => {
    expect(kindShares({ kinds: ['appflow', 'glue', 'sfn'], glueShare: 0.4 })).toEqual([
      ['appflow', 0.3],
      ['glue', 0.4],
      ['sfn', 0.3],
    ]);
    expect(kindShares({ kinds: ['glue'], glueShare: 0.4 })).toEqual([['glue', 1]]);
    expect(kindShares({ kinds: ['sfn', 'appflow'], glueShare: 0.4 })).toEqual([
      ['sfn', 0.5],
      ['appflow', 0.5],
    ]);
  });

  test('the default mix shows every kind, each spec valid, with a run time per flow, job or state machine', () => {
    const { specs, durations } = makeWorkload({ ...DEFAULT_WORKLOAD, jobs: 60 });
    expect(new Set(specs.map((s) => s.kind))).toEqual(new Set(DEFAULT_WORKLOAD.kinds));
    for (const spec of specs) expect(JobSpecSchema.safeParse(spec).success).toBe(true);
    expect(durations.size).toBe(60);
    expect(makeWorkload({ ...DEFAULT_WORKLOAD, jobs: 60 }).specs).toEqual(specs); // reproducible
  });

  test('only the chosen kinds', () => {
    const { specs } = makeWorkload({ ...DEFAULT_WORKLOAD, jobs: 20, kinds: ['sfn'] });
    expect(specs.every((s) => s.kind === 'sfn')).toBe(true);
  });

  test('the summary counts jobs, successes and failures per kind', () => {
    const run = (kind: string, outcome?: string) => ({ kind, outcome }) as unknown as SimRun;
    expect(byKindOf([run('sfn', 'succeeded'), run('sfn', 'failed'), run('glue', 'stopped'), run('glue')])).toEqual({
      sfn: { jobs: 2, succeeded: 1, failed: 1 },
      glue: { jobs: 2, succeeded: 0, failed: 1 },
    });
  });
});
