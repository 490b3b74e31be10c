import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import readline from 'node:readline';

export interface SpawnedEmulators {
  sqsEndpoint: string;
  dynamodbEndpoint: string;
  stop(): Promise<void>;
}

const ROOT = path.resolve(__dirname, '../..');

/**
 * Starts fauxqs + dynalite in a child process and resolves with their loopback endpoints, and what the process wrote to
 * stderr so far (its last 256 KiB; passed on to this process's stderr too).
 */
export async function spawnEmulators(timeoutMs = 30_000): Promise<SpawnedEmulators & { stderr(): string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'local/emulatorsMain.ts')], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-256 * 1024);
    process.stderr.write(chunk);
  });
  const lines = readline.createInterface({ input: child.stdout! });
  const first = await Promise.race([
    once(lines, 'line').then(([line]) => String(line)),
    once(child, 'exit').then(([code]) => Promise.reject(new Error(`emulators exited early with ${code}`))),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error('emulators did not start in time')), timeoutMs).unref()),
  ]);
  const endpoints = JSON.parse(first) as { sqsEndpoint: string; dynamodbEndpoint: string };
  return {
    ...endpoints,
    stderr: () => stderr,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    },
  };
}
