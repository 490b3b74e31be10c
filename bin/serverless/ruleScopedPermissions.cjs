'use strict';
/**
 * A local Serverless plugin (serverless.yml, plugins). The framework lets EventBridge invoke a function through an
 * AWS::Lambda::Permission whose SourceArn it builds with Fn::Join from the rule's name. This rewrites that SourceArn to
 * `Fn::GetAtt [<the rule's logical id>, Arn]`: the same ARN, the same access, but a reference a template reader can
 * follow. AWS Control Tower's CT.LAMBDA.PR.2 (a Lambda permission for a service principal must be scoped by a
 * SourceArn or SourceAccount it can read) accepts only a literal or a reference to a resource of the template, so with
 * the Fn::Join an account that enables it as a proactive control would refuse the stack. A permission whose rule is not
 * found in the template fails the packaging instead of shipping unscoped.
 *
 * It also lets each rule's dead-letter queue take the rule's failed deliveries: EventBridge sends a target's dead-letter
 * events as the service principal, which the queue's policy must allow, and only for the rules that name it
 * (aws:SourceArn, https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-rule-dlq.html). The policy
 * is written here, from the rules the framework compiled, so it names exactly those rules by reference.
 */

const PRINCIPAL = 'events.amazonaws.com';

/** The rule name at the end of the framework's `arn:...:rule/NAME` Fn::Join, or undefined for any other shape. */
function ruleNameOf(sourceArn) {
  const outer = sourceArn && sourceArn['Fn::Join'];
  if (!Array.isArray(outer) || outer[0] !== ':' || !Array.isArray(outer[1])) return undefined;
  const last = outer[1][outer[1].length - 1];
  const inner = last && last['Fn::Join'];
  if (!Array.isArray(inner) || inner[0] !== '/' || !Array.isArray(inner[1]) || inner[1][0] !== 'rule') return undefined;
  const path = inner[1].slice(1);
  // Only rules on the default bus (`rule/NAME`); a custom bus's would be `rule/BUS/NAME`.
  return path.length === 1 && typeof path[0] === 'string' ? path[0] : undefined;
}

function scopeRulePermissions(template) {
  const resources = template.Resources;
  const ruleIdByName = new Map();
  for (const [id, resource] of Object.entries(resources)) {
    if (resource.Type === 'AWS::Events::Rule' && typeof resource.Properties?.Name === 'string' && !resource.Properties.EventBusName)
      ruleIdByName.set(resource.Properties.Name, id);
  }
  const rewritten = [];
  for (const [id, resource] of Object.entries(resources)) {
    if (resource.Type !== 'AWS::Lambda::Permission' || resource.Properties?.Principal !== PRINCIPAL) continue;
    const name = ruleNameOf(resource.Properties.SourceArn);
    if (name === undefined) continue;
    const ruleId = ruleIdByName.get(name);
    if (!ruleId) throw new Error(`ruleScopedPermissions: ${id} names rule ${name}, which the template does not define`);
    resource.Properties.SourceArn = { 'Fn::GetAtt': [ruleId, 'Arn'] };
    rewritten.push(id);
  }
  return rewritten;
}

/** The logical id of the queue a dead-letter ARN names (`Fn::GetAtt [<queue>, Arn]`); anything else fails the packaging. */
function queueIdOf(arn, ruleId) {
  const getAtt = arn && arn['Fn::GetAtt'];
  if (!Array.isArray(getAtt) || getAtt[1] !== 'Arn' || typeof getAtt[0] !== 'string')
    throw new Error(`ruleScopedPermissions: ${ruleId} has a dead-letter queue that is not one of the stack's queues by reference`);
  return getAtt[0];
}

/**
 * One AWS::SQS::QueuePolicy per queue some rule's target dead-letters to (`<queue>Policy`): events.amazonaws.com may
 * send to it, from those rules only. Returns the policies' logical ids.
 */
function scopeRuleDeadLetterQueues(template) {
  const resources = template.Resources;
  const rulesByQueue = new Map();
  for (const [id, resource] of Object.entries(resources)) {
    if (resource.Type !== 'AWS::Events::Rule') continue;
    for (const target of resource.Properties?.Targets ?? []) {
      if (!target.DeadLetterConfig) continue;
      const queue = queueIdOf(target.DeadLetterConfig.Arn, id);
      rulesByQueue.set(queue, [...new Set([...(rulesByQueue.get(queue) ?? []), id])]);
    }
  }
  const written = [];
  for (const [queue, rules] of rulesByQueue) {
    const id = `${queue}Policy`;
    if (resources[id]) throw new Error(`ruleScopedPermissions: the template already has a resource ${id}`);
    resources[id] = {
      Type: 'AWS::SQS::QueuePolicy',
      Properties: {
        Queues: [{ Ref: queue }],
        PolicyDocument: {
          Version: '2012-10-17',
          Statement: [
            {
              Sid: 'RuleDeadLetters',
              Effect: 'Allow',
              Principal: { Service: PRINCIPAL },
              Action: 'sqs:SendMessage',
              Resource: { 'Fn::GetAtt': [queue, 'Arn'] },
              Condition: { ArnEquals: { 'aws:SourceArn': rules.sort().map((rule) => ({ 'Fn::GetAtt': [rule, 'Arn'] })) } },
            },
          ],
        },
      },
    };
    written.push(id);
  }
  return written;
}

class RuleScopedPermissions {
  constructor(serverless) {
    this.hooks = {
      'before:package:finalize': () => {
        const template = serverless.service.provider.compiledCloudFormationTemplate;
        scopeRulePermissions(template);
        scopeRuleDeadLetterQueues(template);
      },
    };
  }
}

module.exports = RuleScopedPermissions;
module.exports.scopeRulePermissions = scopeRulePermissions;
module.exports.scopeRuleDeadLetterQueues = scopeRuleDeadLetterQueues;
