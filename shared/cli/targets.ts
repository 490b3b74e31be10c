import type { CliOptions } from './args';
import { UsageError } from './args';

/** The names serverless.yml gives a stage's resources (test/component/package/template.test.ts holds them to it). */
export function stageResourceNames(stage: string): { table: string; queue: string; deadLetterQueue: string; callbackQueue: string } {
  return {
    table: `sluice-${stage}`,
    queue: `sluice-${stage}-jobs`,
    deadLetterQueue: `sluice-${stage}-dlq`,
    callbackQueue: `sluice-${stage}-callbacks`,
  };
}

export interface Targets {
  table?: string;
  queueUrl?: string;
  dlqUrl?: string;
  callbackQueueUrl?: string;
}

/** Finds a queue's URL by its name (SQS GetQueueUrl), in the account and region of the caller's credentials. */
export type QueueUrlLookup = (queueName: string) => Promise<string>;

/**
 * Where the command acts, each value from the first that has it: the flag, its environment variable (SLUICE_TABLE,
 * SLUICE_QUEUE_URL, SLUICE_DLQ_URL, SLUICE_CALLBACK_QUEUE_URL), or the stage (--stage / SLUICE_STAGE), whose table name is known and whose queue
 * URLs are looked up by name. Only what `need` lists is resolved, so `pool list` makes no SQS call.
 */
export async function resolveTargets(
  options: CliOptions,
  env: NodeJS.ProcessEnv,
  need: ReadonlyArray<keyof Targets>,
  lookupQueueUrl: QueueUrlLookup,
): Promise<Targets> {
  const stage = options.stage ?? blankToUndefined(env.SLUICE_STAGE);
  const names = stage ? stageResourceNames(stage) : undefined;
  const targets: Targets = {
    table: options.table ?? blankToUndefined(env.SLUICE_TABLE),
    queueUrl: options.queueUrl ?? blankToUndefined(env.SLUICE_QUEUE_URL),
    dlqUrl: options.dlqUrl ?? blankToUndefined(env.SLUICE_DLQ_URL),
    callbackQueueUrl: options.callbackQueueUrl ?? blankToUndefined(env.SLUICE_CALLBACK_QUEUE_URL),
  };
  for (const what of need) {
    if (targets[what] !== undefined) continue;
    if (!names)
      throw new UsageError(`which Sluice? ${HOW_TO_NAME[what]}, or --stage STAGE, or start the local stack (npm start -- --serve)`);
    if (what === 'table') targets.table = names.table;
    else if (what === 'queueUrl') targets.queueUrl = await lookupQueueUrl(names.queue);
    else if (what === 'callbackQueueUrl') targets.callbackQueueUrl = await lookupQueueUrl(names.callbackQueue);
    else targets.dlqUrl = await lookupQueueUrl(names.deadLetterQueue);
  }
  return targets;
}

const HOW_TO_NAME: Record<keyof Targets, string> = {
  table: 'give --table NAME (or SLUICE_TABLE)',
  queueUrl: 'give --queue-url URL (or SLUICE_QUEUE_URL)',
  dlqUrl: 'give --dlq-url URL (or SLUICE_DLQ_URL)',
  callbackQueueUrl: 'give --callback-queue-url URL (or SLUICE_CALLBACK_QUEUE_URL)',
};

function blankToUndefined(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
