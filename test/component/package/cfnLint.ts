import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

/**
 * cfn-lint, the CloudFormation linter (https://github.com/aws-cloudformation/cfn-lint: a Python tool, `pip install
 * cfn-lint`; CI machines have it), on a template: every finding, informational ones included. A missing cfn-lint is an
 * error that says so, never a skipped check.
 */

export interface LintFinding {
  /** E..., W..., I... */
  rule: string;
  level: string;
  /** The logical id the finding is about, or (template) */
  resource: string;
  message: string;
}

export interface LintIgnore {
  rule: string;
  /** Exactly the resources that may have it; the same rule on another resource is a new finding. */
  resources: string[];
  reason: string;
}

interface RawFinding {
  Level: string;
  Message: string;
  Rule: { Id: string };
  Location: { Path: Array<string | number> | null };
}

const COMMAND = process.env.CFN_LINT ?? 'cfn-lint';

const missing = (error: unknown) =>
  new Error(
    `cfn-lint is not installed on this machine (${COMMAND}: ${String((error as Error).message)}). Install it with ` +
      '`pip install cfn-lint` (CI machines have it), or point CFN_LINT at it.',
  );

/** cfn-lint's version, or an error saying it is missing. */
/** Asked once per test file: each `cfn-lint --version` is a Python start-up of a second or more of CPU. */
let version: Promise<string> | undefined;

export function cfnLintVersion(): Promise<string> {
  version ??= promisify(execFile)(COMMAND, ['--version']).then(
    ({ stdout }) => stdout.trim(),
    (error: unknown) => {
      throw missing(error);
    },
  );
  return version;
}

/** Lints one template for one region, every rule on (informational ones too: `--include-checks I`). */
export async function runCfnLint(templatePath: string, region = 'us-east-1'): Promise<LintFinding[]> {
  await cfnLintVersion();
  const args = ['--format', 'json', '--include-checks', 'I', '--regions', region, '--', templatePath];
  // Its exit status is a bit mask of the levels found (2 errors, 4 warnings, 8 informational): an answer, not a failure.
  const { stdout } = await promisify(execFile)(COMMAND, args, { maxBuffer: 16 * 1024 * 1024 }).catch(
    (error: { code?: number | string; stdout?: string; stderr?: string }) => {
      if (typeof error.code === 'number' && error.code > 0 && error.code < 32 && error.code !== 1 && error.stdout)
        return { stdout: error.stdout };
      throw new Error(`cfn-lint failed (exit ${String(error.code)}): ${error.stderr ?? String(error)}`);
    },
  );
  return (JSON.parse(stdout) as RawFinding[]).map((f) => {
    const path = f.Location.Path ?? [];
    return {
      rule: f.Rule.Id,
      level: f.Level,
      resource: path[0] === 'Resources' && typeof path[1] === 'string' ? path[1] : '(template)',
      message: f.Message,
    };
  });
}

/** Findings no ignore explains, and ignores (rule, resource) that nothing found any more. */
export function explain(findings: readonly LintFinding[], ignores: readonly LintIgnore[]) {
  const ignored = new Set(ignores.flatMap((i) => i.resources.map((r) => `${i.rule} ${r}`)));
  const found = new Set(findings.map((f) => `${f.rule} ${f.resource}`));
  return {
    unexplained: findings.filter((f) => !ignored.has(`${f.rule} ${f.resource}`)).map((f) => `${f.rule} ${f.resource}: ${f.message}`),
    stale: [...ignored].filter((i) => !found.has(i)).sort(),
  };
}
