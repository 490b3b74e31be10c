import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * AWS Control Tower's proactive controls, run by cfn-guard on a CloudFormation template. Both come from the npm
 * package @cdklabs/cdk-validator-cfnguard (a devDependency): the cfn-guard binary for Linux and macOS, and each
 * control as a guard rule file (rules/control-tower/cfn-guard/<service>/ct-*.guard) with its metadata (Id, name).
 * Nothing is downloaded; the rules are whatever version package-lock.json pins.
 */

const PACKAGE_DIR = path.dirname(require.resolve('@cdklabs/cdk-validator-cfnguard/package.json'));
const RULES_DIR = path.join(PACKAGE_DIR, 'rules/control-tower/cfn-guard');
const METADATA_DIR = path.join(PACKAGE_DIR, 'rules/control-tower/metadata');

/** The package's binary for this machine (it ships Linux and macOS, x86_64 and aarch64). */
export function guardBinary(): string {
  const system = { linux: 'ubuntu', darwin: 'macos' }[os.platform() as string];
  const arch = { x64: 'x86_64', arm64: 'aarch64' }[os.arch() as string];
  if (!system || !arch) throw new Error(`cfn-guard: the package ships no binary for ${os.platform()} ${os.arch()}`);
  return path.join(PACKAGE_DIR, 'bin', system, arch, 'cfn-guard');
}

export interface Control {
  /** CT.SERVICE.PR.N */
  id: string;
  /** What it requires, as AWS words it. */
  name: string;
  /** The guard rule's name, which is how cfn-guard's report names it. */
  rule: string;
}

/** Every control the package ships, from its rule files and their metadata. */
export async function loadControls(): Promise<Control[]> {
  const metadata = new Map<string, { Id: string; DisplayName: string }>();
  for (const dir of await readdir(METADATA_DIR)) {
    for (const file of await readdir(path.join(METADATA_DIR, dir))) {
      metadata.set(file.replace(/\.metadata\.json$/, ''), JSON.parse(await readFile(path.join(METADATA_DIR, dir, file), 'utf8')));
    }
  }
  const controls: Control[] = [];
  for (const dir of await readdir(RULES_DIR)) {
    for (const file of await readdir(path.join(RULES_DIR, dir))) {
      const text = await readFile(path.join(RULES_DIR, dir, file), 'utf8');
      // The primary rule (its header comment's name is not always the one it runs under); the others are helpers.
      const rule = /^rule\s+(\w+)\s+when\b/m.exec(text)?.[1];
      const meta = metadata.get(file.replace(/\.guard$/, ''));
      if (!rule || !meta) throw new Error(`cfn-guard rules: cannot tell the rule name or control of ${dir}/${file}`);
      controls.push({ id: meta.Id, name: meta.DisplayName, rule });
    }
  }
  if (new Set(controls.map((c) => c.rule)).size !== controls.length) throw new Error('cfn-guard rules: two controls share a rule name');
  return controls.sort((a, b) => a.id.localeCompare(b.id, 'en', { numeric: true }));
}

export interface GuardResult {
  /** Controls with at least one resource they apply to, all compliant. */
  passed: string[];
  /** Control id -> the logical ids of the resources that fail it. */
  failed: Map<string, string[]>;
  /** Controls about resource types the template does not have. */
  notApplicable: string[];
}

interface GuardReport {
  compliant: string[];
  not_applicable: string[];
  not_compliant: Array<{ Rule: { name: string } }>;
}

/** Where a failure that names no resource is put. */
export const TEMPLATE = '(template)';

/** The logical ids of the resources a failed rule's checks point at (`/Resources/<id>/...`). */
function resourcesIn(node: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(node)) for (const item of node) resourcesIn(item, into);
  else if (node && typeof node === 'object') {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'path' && typeof value === 'string') {
        const id = /^\/Resources\/([^/]+)\//.exec(value)?.[1];
        if (id) into.add(id);
      } else resourcesIn(value, into);
    }
  }
  return into;
}

/**
 * Runs the controls on one template: all of them (one cfn-guard process, one to two seconds), or only those of the
 * named services (rule folders, e.g. `sqs`).
 */
export async function runControls(templatePath: string, controls: Control[], services?: string[]): Promise<GuardResult> {
  const byRule = new Map(controls.map((c) => [c.rule, c.id]));
  const idOf = (rule: string) => {
    const id = byRule.get(rule);
    if (!id) throw new Error(`cfn-guard reported rule ${rule}, which no control file names`);
    return id;
  };
  const rules = services ? services.flatMap((service) => ['--rules', path.join(RULES_DIR, service)]) : ['--rules', RULES_DIR];
  const args = ['validate', ...rules, '--data', templatePath, '--output-format', 'json', '--structured', '--show-summary', 'none'];
  // Exit status 19 means "some rule failed", which is an answer here, not an error.
  const { stdout } = await promisify(execFile)(guardBinary(), args, { maxBuffer: 64 * 1024 * 1024 }).catch(
    (error: { code?: number; stdout?: string; stderr?: string }) => {
      if (error.code === 19 && error.stdout) return { stdout: error.stdout };
      throw new Error(`cfn-guard failed (exit ${String(error.code)}): ${error.stderr ?? String(error)}`);
    },
  );
  const reports = JSON.parse(stdout) as GuardReport[];
  if (reports.length !== 1) throw new Error(`cfn-guard: expected one report, got ${reports.length}`);
  const report = reports[0]!;
  const failed = new Map<string, string[]>();
  for (const entry of report.not_compliant) {
    const id = idOf(entry.Rule.name);
    const resources = resourcesIn(entry);
    // A failure no resource can be named for still counts, as the whole template's.
    if (resources.size === 0) resources.add(TEMPLATE);
    failed.set(id, [...new Set([...(failed.get(id) ?? []), ...resources])].sort());
  }
  // A control is one primary rule for templates and others for hooks under the same name: the hook ones are always
  // not applicable here, so a control counts as passed when no rule of it failed and one passed.
  const passed = [...new Set(report.compliant.map(idOf))].filter((id) => !failed.has(id)).sort();
  return {
    passed,
    failed,
    notApplicable: [...new Set(report.not_applicable.map(idOf))].filter((id) => !failed.has(id) && !passed.includes(id)).sort(),
  };
}

export interface Suppression {
  control: string;
  /** Exactly the resources that may fail it; another resource failing it is a new violation. */
  resources: string[];
  reason: string;
  /** The stage parameter that, set, makes the stack pass this control. */
  fixedByParam?: string;
}

/** Violations no suppression covers, and suppressions (control, resource) that nothing failed. */
export function compare(failed: Map<string, string[]>, suppressions: Suppression[]) {
  const suppressed = new Set(suppressions.flatMap((s) => s.resources.map((r) => `${s.control} ${r}`)));
  const failing = new Set([...failed].flatMap(([control, resources]) => resources.map((r) => `${control} ${r}`)));
  return {
    unsuppressed: [...failing].filter((v) => !suppressed.has(v)).sort(),
    stale: [...suppressed].filter((s) => !failing.has(s)).sort(),
  };
}
