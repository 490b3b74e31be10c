/**
 * A task or job definition as the ARN IAM checks names it: `<name>:<revision>`, from `name`, `name:revision` or an ARN.
 * With no revision given the service takes the latest, whose number is not known here: `<revision>` stands for it, so
 * a pattern allows it only if it allows any revision.
 */
export function withRevision(definition: string): string {
  const tail = definition.slice(definition.lastIndexOf('/') + 1);
  return tail.includes(':') ? tail : `${tail}:<revision>`;
}
