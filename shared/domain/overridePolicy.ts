import { matchesNamePattern } from './namePattern';

/**
 * What a job may change of what its kind's definition runs (an ECS task's command, environment and roles; a Glue
 * job's arguments; a Batch job's command): whoever can write to the queue writes the spec, so a stage allows each such
 * override explicitly, per kind and per setting, and refuses everything else (deny by default).
 *
 * A stage's policy, per kind: setting -> `true` (any value; any name but the reserved ones), or a list of the names
 * allowed (exact, or a pattern with `*`), or absent / `false` (refused). Reserved names (Glue's own job parameters,
 * which replace or extend the job's code) are allowed only when listed by their exact name.
 */
export type OverrideAllowance = boolean | readonly string[];
export type OverridePolicy = Readonly<Record<string, Readonly<Record<string, OverrideAllowance>>>>;

/** One override a spec makes: the setting that must allow it, where it is, and the names it sets (if any). */
export interface OverrideUse {
  setting: string;
  /** where in the spec: `overrides.containerOverrides[0].command` */
  field: string;
  /** the names it sets (environment variables, Glue arguments, Batch parameters); absent: the whole value */
  names?: readonly string[];
  /** which of `names` only an exact listing allows */
  reserved?: readonly string[];
}

export interface RefusedOverride {
  kind: string;
  setting: string;
  field: string;
  /** the name refused, for a use with names */
  name?: string;
}

function allows(allowance: OverrideAllowance | undefined, name: string | undefined, reserved: boolean): boolean {
  if (allowance === undefined || allowance === false) return false;
  if (name === undefined) return allowance === true;
  if (allowance === true) return !reserved;
  return allowance.some((entry) => (reserved ? entry === name : matchesNamePattern(entry, name)));
}

/** The overrides of a spec (its kind's uses) that the stage's policy does not allow; empty when all are. */
export function refusedOverrides(kind: string, uses: readonly OverrideUse[], policy: OverridePolicy): RefusedOverride[] {
  const ofKind = policy[kind] ?? {};
  return uses.flatMap((use) => {
    const allowance = ofKind[use.setting];
    if (use.names === undefined) return allows(allowance, undefined, false) ? [] : [{ kind, setting: use.setting, field: use.field }];
    return use.names
      .filter((name) => !allows(allowance, name, use.reserved?.includes(name) ?? false))
      .map((name) => ({ kind, setting: use.setting, field: use.field, name }));
  });
}

/** Why a job is refused, naming the setting that would allow it (the dead-letter reason, `sluice enqueue`'s message). */
export function describeRefusedOverrides(refused: readonly RefusedOverride[]): string {
  return refused
    .map(({ kind, setting, field, name }) =>
      name === undefined
        ? `override ${field} is not allowed on this stage (set overrides.${kind}.${setting}: true to allow it)`
        : `override ${field} '${name}' is not allowed on this stage (list '${name}' in overrides.${kind}.${setting} to allow it)`,
    )
    .join('; ');
}
