/** Just enough CloudFormation reading for the template test: resource lookup, references, Fn::Sub. */

export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  DependsOn?: string | string[];
}

export interface CfnTemplate {
  Resources: Record<string, CfnResource>;
  Outputs?: Record<string, { Value: unknown; Description?: string }>;
}

export interface PolicyStatement {
  Sid?: string;
  Effect: string;
  Action?: string | string[];
  NotAction?: unknown;
  Resource?: unknown;
  NotResource?: unknown;
  Condition?: unknown;
}

/**
 * A readable name for a CloudFormation value: `{Fn::GetAtt: [X, Arn]}` -> `X`, other attributes -> `X.Attr`,
 * `{Ref: X}` -> `Ref X`, `{Fn::Sub: s}` -> `s`, a string -> itself.
 */
export function refName(value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as { Ref?: string; 'Fn::GetAtt'?: [string, string]; 'Fn::Sub'?: unknown };
  if (v.Ref !== undefined) return `Ref ${v.Ref}`;
  if (v['Fn::GetAtt']) {
    const [id, attribute] = v['Fn::GetAtt'];
    return attribute === 'Arn' ? id : `${id}.${attribute}`;
  }
  if (typeof v['Fn::Sub'] === 'string') return v['Fn::Sub'];
  return JSON.stringify(value);
}

export const asList = <T>(value: T | T[] | undefined): T[] => (value === undefined ? [] : Array.isArray(value) ? value : [value]);

/** Every statement of every IAM policy in the template, with where it sits. */
export function allPolicyStatements(template: CfnTemplate): Array<{ resource: string; statement: PolicyStatement }> {
  const out: Array<{ resource: string; statement: PolicyStatement }> = [];
  for (const [id, resource] of Object.entries(template.Resources)) {
    const docs: unknown[] = [];
    if (resource.Type === 'AWS::IAM::Role') {
      for (const policy of asList(resource.Properties?.Policies as Array<{ PolicyDocument: unknown }> | undefined))
        docs.push(policy.PolicyDocument);
    } else if (
      ['AWS::IAM::Policy', 'AWS::IAM::ManagedPolicy', 'AWS::SQS::QueuePolicy', 'AWS::S3::BucketPolicy', 'AWS::SNS::TopicPolicy'].includes(
        resource.Type,
      )
    ) {
      docs.push(resource.Properties?.PolicyDocument);
    }
    for (const doc of docs) {
      for (const statement of asList((doc as { Statement?: PolicyStatement | PolicyStatement[] }).Statement))
        out.push({ resource: id, statement });
    }
  }
  return out;
}

/** A role's grants: action -> sorted names of the resources it is allowed on. */
export function grantsOf(role: CfnResource): Record<string, string[]> {
  const grants: Record<string, Set<string>> = {};
  for (const policy of asList(role.Properties?.Policies as Array<{ PolicyDocument: { Statement: PolicyStatement[] } }> | undefined)) {
    for (const statement of policy.PolicyDocument.Statement) {
      if (statement.Effect !== 'Allow') continue;
      for (const action of asList(statement.Action)) {
        grants[action] ??= new Set();
        for (const resource of asList(statement.Resource)) grants[action]!.add(refName(resource));
      }
    }
  }
  return Object.fromEntries(Object.entries(grants).map(([action, resources]) => [action, [...resources].sort()]));
}

/** Values for the pseudo parameters a template uses, for resolving Fn::Sub in tests. */
export const PSEUDO = { 'AWS::Region': 'us-east-1', 'AWS::AccountId': '123456789012', 'AWS::Partition': 'aws' } as const;

/**
 * Resolves `{Fn::Sub: s}` or `{Fn::Sub: [s, vars]}`: a variable of `vars` as itself if literal, as `<refName>` if an
 * intrinsic (`<JobQueue.QueueName>`); pseudo parameters from PSEUDO. Throws on a variable it cannot resolve, as CloudFormation would.
 */
export function resolveSub(value: unknown): string {
  const sub = (value as { 'Fn::Sub': string | [string, Record<string, unknown>] })['Fn::Sub'];
  const [text, vars] = typeof sub === 'string' ? [sub, {}] : sub;
  return text.replace(/\$\{([^}!]+)\}/g, (_, name: string) => {
    if (name in vars) {
      const v = vars[name];
      return typeof v === 'string' || typeof v === 'number' ? String(v) : `<${refName(v)}>`;
    }
    if (name in PSEUDO) return PSEUDO[name as keyof typeof PSEUDO];
    throw new Error(`Fn::Sub variable \${${name}} is not defined`);
  });
}
