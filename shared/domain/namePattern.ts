/**
 * Whether a name matches an `allowed*Pattern` stage setting as IAM matches the resource ARN it goes into: `*` any run of
 * characters (none included), `?` any one character, everything else itself, case-sensitive
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_resource.html, "wildcards").
 */
export function matchesNamePattern(pattern: string, name: string): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, 's').test(name);
}
