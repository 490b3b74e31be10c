import type { InboundMessage } from '../../../shared/app/acquireJob';
import type { AppFlowJob, GlueJob, JobSpec } from '../../../shared/kinds/registry';

export function appflowJob(id: string, pool = 'default', flowName = `flow-${id}`): AppFlowJob {
  return { id, pool, kind: 'appflow', flowName };
}

export function glueJob(id: string, pool = 'default', jobName = `glue-${id}`, args?: Record<string, string>): GlueJob {
  return args ? { id, pool, kind: 'glue', jobName, arguments: args } : { id, pool, kind: 'glue', jobName };
}

let messageCounter = 0;

/** An SQS message carrying the job (a fresh message id each time unless given). */
export function messageOf(spec: JobSpec | string, messageId = `m-${++messageCounter}`): InboundMessage {
  return { messageId, body: typeof spec === 'string' ? spec : JSON.stringify(spec) };
}
