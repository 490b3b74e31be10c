import { DEFAULT_POOL } from '../../../shared/domain/job';
import { AppFlowJobSchema } from '../../../shared/kinds/appflow/spec';
import { GlueJobSchema } from '../../../shared/kinds/glue/spec';
import { JobSpecSchema } from '../../../shared/kinds/registry';

const appflow = { id: 'daily-sales-2026-01-01', kind: 'appflow', flowName: 'salesforce-to-s3', pool: 'crm' };
const glue = { id: 'etl.42', kind: 'glue', jobName: 'nightly etl', arguments: { '--day': '2026-01-01' }, pool: 'etl' };

describe('job spec schema', () => {
  test('accepts a valid AppFlow job as is', () => {
    expect(JobSpecSchema.parse(appflow)).toEqual(appflow);
  });

  test('accepts a valid Glue job, with and without arguments', () => {
    expect(JobSpecSchema.parse(glue)).toEqual(glue);
    const { arguments: _args, ...bare } = glue;
    expect(JobSpecSchema.parse(bare)).toEqual(bare);
  });

  test('a job without a pool goes to the default pool', () => {
    const { pool: _pool, ...noPool } = appflow;
    expect(JobSpecSchema.parse(noPool).pool).toBe(DEFAULT_POOL);
    expect(DEFAULT_POOL).toBe('default');
  });

  test.each([
    ['unknown kind', { ...appflow, kind: 'lambda' }],
    ['kind missing', { id: 'a', flowName: 'f' }],
    ['kind of another case', { ...appflow, kind: 'AppFlow' }],
    ['AppFlow without flowName', { id: 'a', kind: 'appflow' }],
    ['Glue without jobName', { id: 'a', kind: 'glue' }],
    ['AppFlow fields on a Glue job', { id: 'a', kind: 'glue', flowName: 'f' }],
    ['an unknown field (strict)', { ...appflow, colour: 'red' }],
    ['id missing', { kind: 'appflow', flowName: 'f' }],
    ['id a number', { ...appflow, id: 42 }],
    ['id empty', { ...appflow, id: '' }],
    ['id with a space', { ...appflow, id: 'a b' }],
    ['id with a slash', { ...appflow, id: 'a/b' }],
    ['id starting with a dash', { ...appflow, id: '-a' }],
    ['id of 129 characters', { ...appflow, id: 'a'.repeat(129) }],
    ['pool with a #', { ...appflow, pool: 'a#b' }],
    ['pool null', { ...appflow, pool: null }],
    ['flowName with a space', { ...appflow, flowName: 'my flow' }],
    ['flowName of 257 characters', { ...appflow, flowName: 'f'.repeat(257) }],
    ['jobName empty', { ...glue, jobName: '' }],
    ['jobName of 256 characters', { ...glue, jobName: 'j'.repeat(256) }],
    ['jobName with a control character', { ...glue, jobName: 'bad\u0001name' }],
    ['arguments with a number value', { ...glue, arguments: { '--n': 1 } }],
    ['arguments an array', { ...glue, arguments: ['--a'] }],
    ['arguments with an empty key', { ...glue, arguments: { '': 'x' } }],
  ])('rejects %s', (_what, input) => {
    expect(JobSpecSchema.safeParse(input).success).toBe(false);
  });

  test.each([
    ['id of 128 characters', { ...appflow, id: 'a'.repeat(128) }],
    ['id with . _ : -', { ...appflow, id: 'A1._:-z' }],
    ['flowName with !@#.-_', { ...appflow, flowName: 'a!@#.-_b' }],
    ['jobName with spaces and unicode', { ...glue, jobName: 'Nächtlicher ETL-Lauf' }],
  ])('accepts the edge: %s', (_what, input) => {
    expect(JobSpecSchema.safeParse(input).success).toBe(true);
  });

  test('the per-kind schemas reject the other kind', () => {
    expect(AppFlowJobSchema.safeParse(glue).success).toBe(false);
    expect(GlueJobSchema.safeParse(appflow).success).toBe(false);
  });

  test('the id message names the allowed characters', () => {
    const result = JobSpecSchema.safeParse({ ...appflow, id: 'no spaces' });
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]).toMatchObject({
      path: ['id'],
      message: expect.stringContaining("letters, digits, '.', '_', ':' or '-'"),
    });
  });
});
