import { checkJobMessage, stageRefusals, stageSettingsOf } from '../app/stageCheck';
import { parseJobSetsText } from '../config/jobSetsFile';
import { loadServiceDefinition } from '../config/serviceDefinition';
import { jobsOfRun } from '../domain/jobSets';
import { parseSpecFile } from './enqueue';

export interface CheckReport {
  stage: string;
  checked: number;
  /** each job the stage would refuse, and why */
  refused: Array<{ job: string; reasons: string[] }>;
}

/**
 * `sluice check FILE --stage S`: every job of FILE (job specs as `enqueue` reads them, or a job sets file: .yml/.yaml)
 * checked as the acquirer parses it and against stage S's settings as it would be deployed (serverless.yml resolved
 * for S, its shared/config/stages/S.yml included: names its patterns allow, its pools and keyed limits).
 */
export async function checkFile(file: string, text: string, stage: string): Promise<CheckReport> {
  const definition = await loadServiceDefinition(stage);
  const settings = stageSettingsOf(stage, definition.params?.default ?? {});
  const refused: CheckReport['refused'] = [];
  let checked = 0;
  if (/\.ya?ml$/i.test(file)) {
    for (const set of parseJobSetsText(text, file)) {
      for (const spec of jobsOfRun(set, 'check')) {
        checked++;
        const reasons = stageRefusals(spec, settings, Date.now());
        if (reasons.length > 0) refused.push({ job: `set '${set.name}' job '${spec.id.split('.').pop()}'`, reasons });
      }
    }
  } else {
    parseSpecFile(text).forEach((raw, i) => {
      checked++;
      const { id, refusals } = checkJobMessage(raw, settings, Date.now());
      if (refusals.length > 0) refused.push({ job: id ? `job '${id}'` : `spec ${i + 1}`, reasons: refusals });
    });
  }
  return { stage, checked, refused };
}

export function formatCheck(report: CheckReport): string {
  if (report.refused.length === 0) return `stage ${report.stage} would take all ${report.checked} jobs`;
  const lines = report.refused.flatMap(({ job, reasons }) => [`${job}:`, ...reasons.map((reason) => `  ${reason}`)]);
  return [...lines, `stage ${report.stage} would refuse ${report.refused.length} of ${report.checked} jobs`].join('\n');
}
