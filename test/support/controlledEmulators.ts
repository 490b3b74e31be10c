import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import readline from 'node:readline';
import type { EmulatorName, EmulatorRestart } from '../../local/emulators';
import type { SpawnedEmulators } from './spawnEmulators';

export interface ControlledEmulators extends SpawnedEmulators {
  /** Restarts an emulator's listener in the child (data kept); resolves when it listens again. */
  restart(which: EmulatorName, options?: EmulatorRestart): Promise<{ tookMs: number }>;
}

const ROOT = path.resolve(__dirname, '../..');

/**
 * A pair of emulators (fauxqs, dynalite) of one test file's own, in a child process that can restart them. A file
 * that restarts emulators must not share them: every other file's stack would see the outage.
 */
export async function spawnControlledEmulators(timeoutMs = 30_000): Promise<ControlledEmulators> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'local/faults/controlledEmulatorsMain.ts')], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = readline.createInterface({ input: child.stdout! });
  const pending = new Map<number, { resolve: (v: { tookMs: number }) => void; reject: (e: Error) => void }>();
  let endpoints: ((line: string) => void) | undefined;
  lines.on('line', (line) => {
    if (endpoints) return endpoints(line);
    const reply = JSON.parse(line) as { id?: number; ok: boolean; tookMs?: number; error?: string };
    const waiter = reply.id === undefined ? undefined : pending.get(reply.id);
    if (!waiter) return;
    pending.delete(reply.id!);
    if (reply.ok) waiter.resolve({ tookMs: reply.tookMs ?? 0 });
    else waiter.reject(new Error(`emulator restart failed: ${reply.error}`));
  });
  const first = await Promise.race([
    new Promise<string>((resolve) => (endpoints = resolve)),
    once(child, 'exit').then(([code]) => Promise.reject(new Error(`emulators exited early with ${code}`))),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('emulators did not start in time')), timeoutMs).unref()),
  ]);
  endpoints = undefined;
  const { sqsEndpoint, dynamodbEndpoint } = JSON.parse(first) as { sqsEndpoint: string; dynamodbEndpoint: string };
  let nextId = 1;
  return {
    sqsEndpoint,
    dynamodbEndpoint,
    restart(which, options = {}) {
      const id = nextId++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        child.stdin!.write(`${JSON.stringify({ id, restart: which, ...options })}\n`);
      });
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
