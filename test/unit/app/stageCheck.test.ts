import { stageRefusals, stageSettingsOf } from '../../../shared/app/stageCheck';
import { MAX_NOT_BEFORE_AHEAD_MS } from '../../../shared/domain/notBefore';
import { ConfigurationError } from '../../../shared/errors';
import { JobSpecSchema, type JobSpec } from '../../../shared/kinds/registry';

/** What `sluice check` says a stage would refuse, as the stage's functions and IAM would. */
const NOW = Date.parse('2026-11-28T00:00:00Z');
const spec = (raw: Record<string, unknown>): JobSpec => JobSpecSchema.parse({ pool: 'default', ...raw });
const stage = (params: Record<string, string>) => stageSettingsOf('prod', { pools: '{"default":1}', ...params });

test('a notBefore more than a year ahead, which every delivery would refuse', () => {
  const far = spec({
    kind: 'glue',
    id: 'g',
    jobName: 'sluice-x',
    notBefore: new Date(NOW + MAX_NOT_BEFORE_AHEAD_MS + 86_400_000).toISOString(),
  });
  expect(stageRefusals(far, stage({}), NOW)).toEqual([expect.stringMatching(/^notBefore .* is more than a year ahead/)]);
});

test('an exact task or job definition pattern: IAM matches <name>:<revision>, so it allows no revision', () => {
  const exact = stage({ allowedEcsTaskDefinitionPattern: 'sluice-export', allowedBatchJobDefinitionPattern: 'sluice-def' });
  for (const taskDefinition of ['sluice-export:3', 'sluice-export'])
    expect(stageRefusals(spec({ kind: 'ecs', id: 'e', cluster: 'sluice-c', taskDefinition }), exact, NOW)).toEqual([
      expect.stringMatching(
        /^taskDefinition 'sluice-export:(3|<revision>)' does not match allowedEcsTaskDefinitionPattern 'sluice-export'/,
      ),
    ]);
  expect(stageRefusals(spec({ kind: 'batch', id: 'b', jobQueue: 'sluice-q', jobDefinition: 'sluice-def:2' }), exact, NOW)[0]).toMatch(
    /^jobDefinition 'sluice-def:2' does not match/,
  );
  const any = stage({ allowedEcsTaskDefinitionPattern: 'sluice-export:*' });
  expect(stageRefusals(spec({ kind: 'ecs', id: 'e', cluster: 'sluice-c', taskDefinition: 'sluice-export' }), any, NOW)).toEqual([]);
});

test("settings the stage's functions could not read are a configuration error, not a silent default", () => {
  expect(() => stage({ overrides: '{"glue":{"arguments":true}' })).toThrow(ConfigurationError);
  expect(() => stage({ pools: 'not json' })).toThrow(ConfigurationError);
});

test('a pool the stage configures "unlimited" is one of its pools; an unknown one is named with the others', () => {
  const fanout = stage({ pools: '{"default":1,"fanout":"unlimited"}' });
  const glue = (pool: string) => spec({ kind: 'glue', id: 'g', jobName: 'sluice-x', pool });
  expect(stageRefusals(glue('fanout'), fanout, NOW)).toEqual([]);
  expect(stageRefusals(glue('other'), fanout, NOW)).toEqual([
    expect.stringMatching(/^pool 'other' is not among the stage's pools \(default, fanout\)/),
  ]);
});
