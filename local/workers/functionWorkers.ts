import path from 'node:path';
import { mkdir, rm } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import type { Context } from 'aws-lambda';
import { build } from 'esbuild';
import { ROOT } from '../infra/serviceDefinition';
import { type AbandonMessage, type CallMessage, errorFrom, type FromWorker, type InvokeMessage, type WorkerSetup } from './messages';

export interface FunctionWorkersOptions {
  /** functions/<file>.<export> by function name */
  handlers: Record<string, { file: string; exported: string }>;
  /** Threads per function (at least 1 each). */
  threads: Record<string, number>;
  /** Each AWS call a handler made, with its input and output when `detailedCalls`. */
  onCall: (call: CallMessage) => void;
  detailedCalls: boolean;
  region: string;
  accountId: string;
}

export interface FunctionWorkers {
  /** `abandoned`: aborted when the stack abandons the invocation (its timeout): the worker then fences its calls. */
  invoke(functionName: string, event: unknown, context: Context, abandoned?: AbortSignal): Promise<unknown>;
  /** Threads running, by function. */
  threads(): Record<string, number>;
  close(): Promise<void>;
}

interface Thread {
  worker: Worker;
  inFlight: number;
}

// Each function is bundled with its worker loop by esbuild, as the deployment bundles it (serverless.yml's esbuild),
// so a thread loads plain JavaScript: its import()s (the kinds' starters) included, which tsx cannot hook in a worker
// on Node 20. Packages stay in node_modules (found from the cache folder), so a bundle builds in a fraction of a second.
const WORKER_LOOP = path.join(__dirname, 'functionWorker.ts');
let bundles = 0;

async function bundle(dir: string, name: string, handler: { file: string; exported: string }): Promise<string> {
  const outfile = path.join(dir, `${name}.cjs`);
  await build({
    stdin: {
      contents: [
        `import { runWorker } from ${JSON.stringify(WORKER_LOOP)};`,
        `import * as fn from ${JSON.stringify(path.join(ROOT, handler.file))};`,
        `runWorker(fn[${JSON.stringify(handler.exported)}]);`,
      ].join('\n'),
      resolveDir: ROOT,
      loader: 'ts',
      sourcefile: `${name}-worker.ts`,
    },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    keepNames: true, // Sluice's errors name themselves from their class
    sourcemap: 'inline',
    outfile,
    logLevel: 'silent',
  });
  return outfile;
}

/**
 * Sluice's functions in worker threads, as Lambda runs each invocation in an environment of its own: each function
 * gets its own threads (loading only its handler), and an invocation goes to the thread with the fewest running. The
 * stack's event sources, bus and simulator stay on the main thread; a handler that is busy no longer delays them, nor
 * the other functions (issue 13: the bench measured one event loop running everything).
 */
export async function startFunctionWorkers(options: FunctionWorkersOptions): Promise<FunctionWorkers> {
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void; thread: Thread }>();
  const dir = path.join(ROOT, 'node_modules', '.cache', 'sluice-function-workers', `${process.pid}-${bundles++}`);
  await mkdir(dir, { recursive: true });
  const files = Object.fromEntries(
    await Promise.all(Object.keys(options.threads).map(async (name) => [name, await bundle(dir, name, options.handlers[name]!)] as const)),
  );
  let nextId = 0;
  const pools = new Map<string, Thread[]>();

  const spawn = (functionName: string) =>
    new Promise<Thread>((resolve, reject) => {
      const setup: WorkerSetup = {
        detailedCalls: options.detailedCalls,
        region: options.region,
        accountId: options.accountId,
      };
      // env: a copy of this process's environment now, the functions' configuration included (Lambda's env vars).
      const worker = new Worker(files[functionName]!, { workerData: setup, env: { ...process.env } });
      const thread: Thread = { worker, inFlight: 0 };
      worker.on('message', (message: FromWorker) => {
        if (message.type === 'call') options.onCall(message);
        else if (message.type === 'ready') resolve(thread);
        else {
          const waiting = pending.get(message.id);
          if (!waiting) return;
          pending.delete(message.id);
          waiting.thread.inFlight--;
          if (message.ok) waiting.resolve(message.value);
          else waiting.reject(errorFrom(message.error!));
        }
      });
      worker.once('error', (error) => {
        reject(error);
        for (const [id, waiting] of pending) {
          if (waiting.thread !== thread) continue;
          pending.delete(id);
          waiting.reject(error);
        }
      });
    });

  const spawned = await Promise.all(
    Object.entries(options.threads).map(
      async ([name, n]) => [name, await Promise.all(Array.from({ length: Math.max(1, n) }, () => spawn(name)))] as const,
    ),
  );
  for (const [name, threads] of spawned) pools.set(name, threads);

  return {
    invoke(functionName, event, context, abandoned) {
      const pool = pools.get(functionName);
      if (!pool) return Promise.reject(new Error(`no worker runs function ${functionName}`));
      const thread = pool.reduce((least, t) => (t.inFlight < least.inFlight ? t : least));
      const id = nextId++;
      const message: InvokeMessage = {
        type: 'invoke',
        id,
        functionName,
        event,
        context: {
          functionName: context.functionName,
          remainingMs: context.getRemainingTimeInMillis(),
          memoryLimitInMB: Number(context.memoryLimitInMB),
        },
      };
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject, thread });
        thread.inFlight++;
        thread.worker.postMessage(message);
        // The worker also fences the invocation at its own deadline (the context's remaining time); this tells it at once.
        abandoned?.addEventListener(
          'abort',
          () => {
            const reason = abandoned.reason instanceof Error ? abandoned.reason.message : String(abandoned.reason);
            if (pending.has(id)) thread.worker.postMessage({ type: 'abandon', id, reason } satisfies AbandonMessage);
          },
          { once: true },
        );
      });
    },
    threads: () => Object.fromEntries([...pools].map(([name, threads]) => [name, threads.length])),
    async close() {
      await Promise.all([...pools.values()].flat().map((t) => t.worker.terminate()));
      for (const waiting of pending.values()) waiting.reject(new Error('function workers closed'));
      pending.clear();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
