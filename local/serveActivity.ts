import { DynamoJobLedger } from '../shared/adapters/dynamodb/jobLedger';
import { stageRefusals, type StageSettings } from '../shared/app/stageCheck';
import type { LocalStack } from './stack';
import { jobIdOfRun } from './simulators/simulatedKinds';

export { jobIdOfRun };

const clock = () => new Date().toISOString().slice(11, 23);

/**
 * One line per run started and ended (from the job API simulator's record, looked at 4 times a second) and per
 * job sent to the dead-letter queue (seen on the functions' own SQS client), as they happen. Returns the stop function.
 */
export function watchActivity(stack: LocalStack, log: (line: string) => void, options: { checkStage?: StageSettings } = {}): () => void {
  const started = new Set<string>();
  const ended = new Set<string>();
  const warned = new Set<string>();
  const ledger = new DynamoJobLedger(stack.doc, stack.tableName);
  // Locally any name runs; a deployed stage starts only what its settings allow: each refusal is said once.
  const check = async (jobId: string) => {
    const record = await ledger.get(jobId).catch(() => undefined);
    if (!record || !options.checkStage) return;
    for (const reason of stageRefusals(record.spec, options.checkStage)) {
      if (warned.has(reason)) continue;
      warned.add(reason);
      log(`${clock()} warning   job ${jobId}: ${reason}`);
    }
  };
  const look = () => {
    for (const run of stack.simulator.runs()) {
      const jobId = jobIdOfRun(run);
      const what = `${run.kind.padEnd(7)} ${run.name}  job ${jobId ?? '?'}  run ${run.executionId}`;
      if (!started.has(run.executionId)) {
        started.add(run.executionId);
        log(`${clock()} start     ${what}`);
        if (jobId && options.checkStage) void check(jobId);
      }
      if (run.endedAt !== undefined && !ended.has(run.executionId)) {
        ended.add(run.executionId);
        log(`${clock()} ${(run.outcome ?? 'ended').padEnd(9)} ${what}  after ${((run.endedAt - run.startedAt) / 1000).toFixed(1)} s`);
      }
    }
  };
  const timer = setInterval(look, 250);
  let watching = true;
  stack.sqs.middlewareStack.add(
    (next, context) => async (args) => {
      const result = await next(args);
      const input = (
        args as { input: { QueueUrl?: string; MessageBody?: string; MessageAttributes?: Record<string, { StringValue?: string }> } }
      ).input;
      if (watching && context.commandName === 'SendMessageCommand' && input.QueueUrl === stack.deadLetterUrl) {
        const reason = input.MessageAttributes?.['sluice-reason']?.StringValue ?? 'no reason given';
        log(`${clock()} dead      ${jobIdInBody(input.MessageBody)}: ${reason}`);
      }
      return result;
    },
    { step: 'initialize', name: 'sluiceServeActivity' },
  );
  return () => {
    watching = false;
    clearInterval(timer);
    look();
  };
}

function jobIdInBody(body: string | undefined): string {
  try {
    const id = (JSON.parse(body ?? '') as { id?: unknown }).id;
    return typeof id === 'string' ? `job ${id}` : 'a message';
  } catch {
    return 'a message (not JSON)';
  }
}
