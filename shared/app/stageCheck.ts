import { matchesNamePattern } from '../domain/namePattern';
import { dueAtOf, notBeforeTooFar } from '../domain/notBefore';
import { describeRefusedOverrides, type OverridePolicy, refusedOverrides } from '../domain/overridePolicy';
import { describeIssues } from '../domain/zodIssues';
import { parseOverrides, parsePoolSetting, parsePools } from '../config/settings';
import { type JobSpec, JobSpecSchema, kindOf } from '../kinds/registry';

/** A stage's settings as deployed (params.default of serverless.yml under its shared/config/stages/<stage>.yml), read once. */
export interface StageSettings {
  stage: string;
  params: Readonly<Record<string, unknown>>;
  pools: Readonly<Record<string, number>>;
  /** pools configured "unlimited" */
  unlimitedPools?: readonly string[];
  keyLimits: Readonly<Record<string, number>>;
  overrides: OverridePolicy;
}

/**
 * A stage's resolved parameters, parsed as its functions parse them (shared/config/settings.ts): a malformed value is a
 * ConfigurationError naming it, as the deployed functions would fail on it.
 */
export function stageSettingsOf(stage: string, params: Readonly<Record<string, unknown>>): StageSettings {
  const text = (name: string, fallback: string) => (typeof params[name] === 'string' ? (params[name] as string) : fallback);
  const pools = parsePoolSetting(text('pools', '{}'));
  return {
    stage,
    params,
    pools: pools.limits,
    unlimitedPools: pools.unlimited,
    keyLimits: parsePools(text('keyLimits', '{}'), 'KEY_LIMITS', 'key prefix'),
    overrides: parseOverrides(text('overrides', '{}')),
  };
}

/**
 * What a stage would refuse of a job, before it is sent (`sluice check`, and the local stack's warnings): a name its
 * IAM patterns do not allow (the start is refused there: the job is dead-lettered), an override its policy does not
 * allow, a notBefore more than a year ahead, a pool it does not configure, a
 * keyed limit with no default. Each says which setting to change. Empty: the stage would run it as far as its
 * configuration goes (a pool created at run time, `sluice pool set-limit --create`, is not known here).
 */
export function stageRefusals(
  spec: JobSpec,
  { stage, params, pools, unlimitedPools = [], keyLimits, overrides }: StageSettings,
  now: number,
): string[] {
  const kind = kindOf(spec.kind);
  const file = `shared/config/stages/${stage}.yml`;
  const refusals: string[] = [];
  for (const { param, field, name } of kind.names(spec as never)) {
    const pattern = String(params[param] ?? kind.iam.params[param] ?? '');
    if (!matchesNamePattern(pattern, name))
      refusals.push(`${field} '${name}' does not match ${param} '${pattern}': IAM refuses it on stage ${stage} (set ${param} in ${file})`);
  }
  const tooFar = notBeforeTooFar(dueAtOf(spec), now);
  if (tooFar) refusals.push(tooFar);
  const refused = refusedOverrides(spec.kind, kind.overrides?.(spec as never) ?? [], overrides);
  if (refused.length > 0) refusals.push(`${describeRefusedOverrides(refused)} (in ${file})`);
  if (!(spec.pool in pools) && !unlimitedPools.includes(spec.pool))
    refusals.push(
      `pool '${spec.pool}' is not among the stage's pools (${[...Object.keys(pools), ...unlimitedPools].join(', ') || 'none'}): its jobs are dead-lettered unless it is created first (add it to pools in ${file}, or sluice pool set-limit ${spec.pool} N --create)`,
    );
  for (const key of spec.limits ?? []) {
    const prefix = key.split(':')[0]!;
    if (!(prefix in keyLimits))
      refusals.push(
        `keyed limit '${key}' has no default for '${prefix}' (keyLimits in ${file}): set it first with sluice limit set ${key} N`,
      );
  }
  return refusals;
}

/** A raw job message checked as the acquirer parses it, then against the stage. */
export function checkJobMessage(raw: unknown, stage: StageSettings, now: number): { id?: string; refusals: string[] } {
  const parsed = JobSpecSchema.safeParse(raw && typeof raw === 'object' ? { id: 'unnamed', ...raw } : raw);
  const id = raw && typeof raw === 'object' && typeof (raw as { id?: unknown }).id === 'string' ? (raw as { id: string }).id : undefined;
  if (!parsed.success) return { id, refusals: [describeIssues(parsed.error, '(spec)')] };
  return { id, refusals: stageRefusals(parsed.data, stage, now) };
}
