import { localEnvFilePath, readLiveLocalEnv } from './localEnvFile';
import type { CliOptions } from './args';
import { UsageError } from './args';

const TARGET_VARS = ['SLUICE_TABLE', 'SLUICE_QUEUE_URL', 'SLUICE_DLQ_URL', 'SLUICE_CALLBACK_QUEUE_URL', 'SLUICE_STAGE'] as const;

/**
 * The resident local stack (`npm start -- --serve`) as the target when the command names none (no --table,
 * --queue-url, --dlq-url or --stage, none of their variables) or names `--stage local`: its settings file sets the
 * endpoints, placeholder credentials, region and targets in `env` (the SDK reads them there: its standard
 * configuration). Returns whether it did. A stage named `local` with no stack running is a UsageError saying so.
 */
export async function useLocalStack(options: CliOptions, env: NodeJS.ProcessEnv): Promise<boolean> {
  const askedForLocal = (options.stage ?? env.SLUICE_STAGE) === 'local';
  const named =
    options.table ??
    options.queueUrl ??
    options.dlqUrl ??
    options.callbackQueueUrl ??
    options.stage ??
    TARGET_VARS.find((v) => env[v]?.trim());
  if (named !== undefined && !askedForLocal) return false;
  const file = localEnvFilePath(env);
  const local = await readLiveLocalEnv(file);
  if (!local) {
    if (askedForLocal) throw new UsageError(`no local stack is running (no live ${file}): start one with npm start -- --serve`);
    return false;
  }
  Object.assign(env, local.vars);
  if (askedForLocal) {
    options.stage = undefined;
    delete env.SLUICE_STAGE;
  }
  return true;
}
