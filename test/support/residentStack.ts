import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseLocalEnv } from '../../shared/cli/localEnvFile';
import { waitFor } from './waitFor';

const ROOT = path.resolve(__dirname, '../..');
/**
 * Node with tsx's loader, as `npm start` runs it: no tsx CLI process in between, whose signal relay SIGKILLs a child
 * that does not acknowledge a SIGINT within 30 ms (a loaded machine) and exits 130.
 */
const TSX_NODE = ['--import', 'tsx'];

/** The environment of a new shell: no AWS or Sluice settings, so what follows comes from the local env file alone. */
export function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(AWS_|SLUICE_)/.test(name)));
  return { ...env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...extra };
}

export interface Resident {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  vars: Record<string, string>;
  /** the process that serves (tsx runs main.ts in a child of the one spawned here) */
  pid: number;
  stop(): Promise<number | null>;
}

/** `npm start -- --serve ARGS` as a user runs it (node --import tsx local/main.ts), up once its env file has the exports. */
export async function startResident(args: string[], envFile: string): Promise<Resident> {
  const child = spawn(process.execPath, [...TSX_NODE, path.join(ROOT, 'local/main.ts'), '--serve', '--exports-file', envFile, ...args], {
    cwd: ROOT,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  const { vars, pid } = await Promise.race([
    waitFor(
      'the resident stack to write its env file',
      async () => {
        const env = parseLocalEnv(await readFile(envFile, 'utf8').catch(() => ''));
        return env?.vars.SLUICE_TABLE ? env : undefined;
      },
      60_000,
      100,
    ),
    exited.then((code) => Promise.reject(new Error(`npm start -- --serve exited with ${code}: ${err}`))),
  ]);
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    vars,
    pid,
    async stop() {
      if (child.exitCode === null) child.kill('SIGINT');
      return exited;
    },
  };
}

/** Runs a command to its end: its exit code and output. */
export function runCommand(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: ROOT, env, timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** `sluice ...` from a shell whose only Sluice setting is where the resident stack's env file is. */
export function sluice(envFile: string, ...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCommand([path.join(ROOT, 'bin/sluice.cjs'), ...args], cleanEnv({ SLUICE_LOCAL_ENV_FILE: envFile }));
}

/** `npm start ARGS` (node --import tsx local/main.ts) to its end. */
export function npmStart(args: string[], extraEnv: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCommand([...TSX_NODE, path.join(ROOT, 'local/main.ts'), ...args], cleanEnv(extraEnv));
}
