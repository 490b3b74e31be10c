import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

/** The resolved serverless.yml, as `serverless print` gives it (CloudFormation functions left as objects). */
export interface ServiceDefinition {
  service: string;
  /** The stage's parameters as resolved: params.default under the stage's own settings file. */
  params?: Record<string, Record<string, unknown>>;
  custom?: { local?: { timeScale?: number } };
  provider: { environment?: Record<string, unknown>; region?: string };
  functions: Record<string, FunctionDefinition>;
  resources: { Resources: Record<string, CfnResource> };
}

export interface FunctionDefinition {
  handler: string;
  timeout?: number;
  environment?: Record<string, unknown>;
  events?: Array<Record<string, unknown>>;
  /** Asynchronous invocation (EventInvokeConfig): retries after a function error, 0-2; Lambda's default is 2. */
  maximumRetryAttempts?: number;
  /** Asynchronous invocation: seconds an event may wait, 60-21600; Lambda's default is 21600. */
  maximumEventAge?: number;
  destinations?: { onSuccess?: unknown; onFailure?: unknown };
}

export interface CfnResource {
  Type: string;
  Properties?: Record<string, unknown>;
}

export const ROOT = path.resolve(__dirname, '../..');
const CACHE_DIR = path.join(ROOT, 'node_modules/.cache/sluice');

/**
 * Reads serverless.yml through the Serverless Framework itself (so variables and params resolve exactly as on
 * deploy), offline, with dummy credentials. The result is cached by the files' content and the stage.
 */
export async function loadServiceDefinition(stage = 'local'): Promise<ServiceDefinition> {
  const source = await readFile(path.join(ROOT, 'serverless.yml'), 'utf8');
  // The stage's settings file is read by serverless.yml too (shared/config/stages/<stage>.yml).
  const stageDir = process.env.SLUICE_STAGE_CONFIG_DIR ? path.resolve(process.env.SLUICE_STAGE_CONFIG_DIR) : path.join(ROOT, 'shared/config/stages');
  const stageSettings = await readFile(path.join(stageDir, `${stage}.yml`), 'utf8').catch(() => '');
  const hash = createHash('sha256').update(stage).update('\0').update(source).update('\0').update(stageSettings).digest('hex').slice(0, 16);
  const cacheFile = path.join(CACHE_DIR, `service-${stage}-${hash}.json`);
  try {
    return JSON.parse(await readFile(cacheFile, 'utf8')) as ServiceDefinition;
  } catch {
    // not cached yet
  }
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [path.join(ROOT, 'node_modules/osls/bin/serverless.js'), 'print', '--format', 'json', '--stage', stage],
    {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
      env: {
        ...process.env,
        AWS_ACCESS_KEY_ID: 'local',
        AWS_SECRET_ACCESS_KEY: 'local',
        SLS_TELEMETRY_DISABLED: '1',
        SLS_NOTIFICATIONS_MODE: 'off',
      },
    },
  );
  const definition = JSON.parse(stdout) as ServiceDefinition;
  await mkdir(CACHE_DIR, { recursive: true });
  await writeFile(cacheFile, JSON.stringify(definition));
  return definition;
}
