import { open, readFile, rename, unlink, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { LocalStackRunningError } from '../errors';

/**
 * The file the resident local stack (`npm start -- --serve`) writes: `export NAME='value'` lines a shell can source,
 * headed by the owning process id. `sluice` reads it by itself when no target is given, so every command works against
 * the local stack with no flags. It exists only while the stack runs; it is also the lock that keeps a second one out.
 */
export const LOCAL_ENV_FILE_VAR = 'SLUICE_LOCAL_ENV_FILE';

const ROOT = path.resolve(__dirname, '../..');

/** The flag's path, else SLUICE_LOCAL_ENV_FILE, else `.sluice/local.env` in this checkout. */
export function localEnvFilePath(env: NodeJS.ProcessEnv = process.env, explicit?: string): string {
  return path.resolve(explicit ?? (env[LOCAL_ENV_FILE_VAR]?.trim() || path.join(ROOT, '.sluice', 'local.env')));
}

export interface LocalEnv {
  pid: number;
  vars: Record<string, string>;
}

const HEADER = /^# sluice local stack, pid (\d+)/;

export function formatLocalEnv(env: LocalEnv): string {
  const lines = Object.entries(env.vars).map(([name, value]) => exportLine(name, value));
  return `# sluice local stack, pid ${env.pid} (npm start -- --serve); removed when it stops\n${lines.join('\n')}\n`;
}

export function exportLine(name: string, value: string): string {
  return `export ${name}='${value.replace(/'/g, `'\\''`)}'`;
}

/** Reads what formatLocalEnv wrote; undefined when the text is not such a file (a claim not filled in yet, say). */
export function parseLocalEnv(text: string): LocalEnv | undefined {
  const [first, ...rest] = text.split('\n');
  const header = HEADER.exec(first ?? '');
  if (!header) return undefined;
  const vars: Record<string, string> = {};
  for (const line of rest) {
    const match = /^export ([A-Za-z_][A-Za-z0-9_]*)='(.*)'$/.exec(line);
    if (match) vars[match[1]!] = match[2]!.replace(/'\\''/g, "'");
  }
  return { pid: Number(header[1]), vars };
}

export function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, owned by someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The local stack's variables if its file exists and the process that wrote it is alive; a stale file is ignored. */
export async function readLiveLocalEnv(file: string): Promise<LocalEnv | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  const env = parseLocalEnv(text);
  return env && isAlive(env.pid) && Object.keys(env.vars).length > 0 ? env : undefined;
}

export interface LocalEnvClaim {
  /** Replaces the claim with the stack's variables (atomically: a reader sees the claim or the whole file). */
  publish(vars: Record<string, string>): Promise<void>;
  /** Removes the file if it is still this process's. */
  release(): Promise<void>;
}

/**
 * Takes the file for this process (created exclusively, so of two stacks started at once one wins). A file left by a
 * process that is gone is taken over; one whose process lives is a LocalStackRunningError naming it.
 */
export async function claimLocalEnvFile(file: string, pid = process.pid): Promise<LocalEnvClaim> {
  await mkdir(path.dirname(file), { recursive: true });
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(file, 'wx');
      await handle.writeFile(`# sluice local stack, pid ${pid} (starting)\n`);
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 2) throw error;
      const owner = parseLocalEnv(await readFile(file, 'utf8').catch(() => ''));
      if (owner && isAlive(owner.pid)) {
        const endpoints = [owner.vars.AWS_ENDPOINT_URL_SQS, owner.vars.AWS_ENDPOINT_URL_DYNAMODB].filter(Boolean).join(', ');
        throw new LocalStackRunningError(
          `a local stack is already running (pid ${owner.pid}${endpoints ? `, ${endpoints}` : ''}; its settings are in ${file}): use it, or stop it first (Ctrl-C in its terminal, or kill ${owner.pid})`,
        );
      }
      await unlink(file).catch(() => undefined); // stale: its process is gone
    }
  }
  return {
    async publish(vars) {
      const temp = `${file}.${pid}.tmp`;
      await writeFile(temp, formatLocalEnv({ pid, vars }));
      await rename(temp, file);
    },
    async release() {
      const owner = parseLocalEnv(await readFile(file, 'utf8').catch(() => ''));
      if (owner?.pid === pid) await unlink(file).catch(() => undefined);
    },
  };
}
