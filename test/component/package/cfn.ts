import { matchesNamePattern } from '../../../shared/domain/namePattern';
/** Just enough CloudFormation reading for the template test: resource lookup, references, Fn::Sub. */

export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
  DependsOn?: string | string[];
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
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

/**
 * A value of the template as AWS would resolve it in this account and region (PSEUDO): strings as themselves, Fn::Sub
 * (pseudo parameters and `${Resource}` / `${Resource.Arn}`), Ref of a pseudo parameter, and the ARN (`Fn::GetAtt
 * [X, Arn]`, or `Ref X` of a secret) of the resource types Sluice's policies name, from their names in the template.
 */
export function resolveIn(template: CfnTemplate, value: unknown): string {
  if (typeof value === 'string') return value;
  const v = value as { Ref?: string; 'Fn::GetAtt'?: [string, string]; 'Fn::Sub'?: string };
  if (v.Ref !== undefined) return v.Ref in PSEUDO ? PSEUDO[v.Ref as keyof typeof PSEUDO] : arnOf(template, v.Ref);
  if (v['Fn::GetAtt']) {
    const [id, attribute] = v['Fn::GetAtt'];
    if (attribute !== 'Arn') throw new Error(`resolveIn: cannot resolve ${id}.${attribute}`);
    return arnOf(template, id);
  }
  if (typeof v['Fn::Sub'] === 'string')
    return v['Fn::Sub'].replace(/\$\{([^}!]+)\}/g, (_, name: string) => {
      if (name in PSEUDO) return PSEUDO[name as keyof typeof PSEUDO];
      return arnOf(template, name.replace(/\.Arn$/, ''));
    });
  throw new Error(`resolveIn: cannot resolve ${JSON.stringify(value)}`);
}

function arnOf(template: CfnTemplate, id: string): string {
  const resource = template.Resources[id];
  if (!resource) throw new Error(`resolveIn: the template has no resource ${id}`);
  const p = resource.Properties ?? {};
  const { 'AWS::Region': region, 'AWS::AccountId': account } = PSEUDO;
  const name = (key: string) => resolveIn(template, p[key]);
  switch (resource.Type) {
    case 'AWS::SQS::Queue':
      return `arn:aws:sqs:${region}:${account}:${name('QueueName')}`;
    case 'AWS::Lambda::Function':
      return `arn:aws:lambda:${region}:${account}:function:${name('FunctionName')}`;
    case 'AWS::DynamoDB::Table':
      return `arn:aws:dynamodb:${region}:${account}:table/${name('TableName')}`;
    case 'AWS::IAM::Role':
      return `arn:aws:iam::${account}:role/${name('RoleName')}`;
    case 'AWS::Logs::LogGroup':
      return `arn:aws:logs:${region}:${account}:log-group:${name('LogGroupName')}:*`;
    case 'AWS::SecretsManager::Secret':
      return `arn:aws:secretsmanager:${region}:${account}:secret:${name('Name')}-AbCdEf`;
    case 'AWS::Events::Rule':
      return `arn:aws:events:${region}:${account}:rule/${name('Name')}`;
    case 'AWS::Scheduler::ScheduleGroup':
      return `arn:aws:scheduler:${region}:${account}:schedule-group/${name('Name')}`;
    default:
      throw new Error(`resolveIn: no ARN for ${resource.Type} ${id}`);
  }
}

/** IAM's wildcard match of a whole string (case-sensitive): the same rule the product checks names with. */
export const wildcardMatch = matchesNamePattern;

/** A request to authorize: the action, the resource's ARN and the request's condition keys (absent keys: absent). */
export interface IamRequest {
  action: string;
  resource: string;
  context?: Record<string, string>;
}

export type IamDecision = 'allow' | 'deny' | 'implicit-deny';

/**
 * How IAM decides on one identity policy's statements, for the operators Sluice's policies use
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_evaluation-logic.html): an explicit Deny that
 * matches wins; else an Allow that matches allows; else nothing does. A condition key missing from the request fails
 * every operator but the negated ones (StringNotEquals: true) and Null
 * (https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_condition_operators.html).
 */
export function decide(template: CfnTemplate, statements: readonly PolicyStatement[], request: IamRequest): IamDecision {
  const context = request.context ?? {};
  const holds = (operator: string, key: string, wanted: unknown): boolean => {
    const values = asList(wanted as unknown[] | unknown).map((w) => resolveIn(template, w));
    const actual = context[key];
    switch (operator) {
      case 'StringEquals':
        return actual !== undefined && values.includes(actual);
      case 'StringNotEquals':
        return actual === undefined || !values.includes(actual);
      case 'StringLike':
      case 'ArnLike':
      case 'ArnEquals':
        return actual !== undefined && values.some((v) => wildcardMatch(v, actual));
      case 'Null':
        return values.includes(String(actual === undefined));
      default:
        throw new Error(`decide: operator ${operator} not modelled`);
    }
  };
  const matches = (s: PolicyStatement) =>
    asList(s.Action).includes(request.action) &&
    asList(s.Resource).some((r) => wildcardMatch(resolveIn(template, r), request.resource)) &&
    Object.entries((s.Condition ?? {}) as Record<string, Record<string, unknown>>).every(([operator, keys]) =>
      Object.entries(keys).every(([key, wanted]) => holds(operator, key, wanted)),
    );
  if (statements.some((s) => s.Effect === 'Deny' && matches(s))) return 'deny';
  return statements.some((s) => s.Effect === 'Allow' && matches(s)) ? 'allow' : 'implicit-deny';
}

/** The statements of a role's inline policies. */
export function statementsOf(role: CfnResource): PolicyStatement[] {
  return asList(role.Properties?.Policies as Array<{ PolicyDocument: { Statement: PolicyStatement[] } }> | undefined).flatMap((p) =>
    asList(p.PolicyDocument.Statement),
  );
}
