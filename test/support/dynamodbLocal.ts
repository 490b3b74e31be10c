import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * The official DynamoDB Local jar, as shipped inside the npm package amplify-dynamodb-simulator (nothing is
 * downloaded). Its own `launch()` only works under the Amplify CLI, so the jar is spawned directly.
 *
 * Binding: DynamoDB Local 1.25 has no `-host` option (`-help` lists -port, -inMemory, -dbPath, -sharedDb, -cors,
 * -delayTransientStatuses, -optimizeDbBeforeStartup, -disableTelemetry; `-host` is "Unrecognized option"), so it listens
 * on all interfaces. The clients here always talk to 127.0.0.1.
 */
export const DYNAMODB_LOCAL_DIR = path.resolve(__dirname, '../../node_modules/amplify-dynamodb-simulator/emulator');

export interface DynamoDbLocal {
  endpoint: string;
  port: number;
  stop(): Promise<void>;
}

export const LOCAL_CREDENTIALS = { accessKeyId: 'x', secretAccessKey: 'x' };

/**
 * A DynamoDB client for a local endpoint (the region and credentials are placeholders). Up to 256 sockets, so a test
 * that fires 200 requests at once really has them in flight together (the SDK's default is 50).
 */
export function localDynamoClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, requestHandler: { httpAgent: { maxSockets: 256 } } });
}

/** The document client the adapters use in production, pointed at a local endpoint. */
export function localDocumentClient(endpoint: string): DynamoDBDocumentClient {
  return DynamoDBDocumentClient.from(localDynamoClient(endpoint), { marshallOptions: { removeUndefinedValues: true } });
}

/** A port that was free a moment ago (the OS picks it; the short gap before java binds it is accepted). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A test process that dies without calling stop() must not leave a JVM behind.
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}

/**
 * Starts DynamoDB Local in memory on a free port and resolves once it answers ListTables (polled until a deadline, no
 * fixed sleep). Rejects with the jar's output if java exits first or the deadline passes.
 */
export async function startDynamoDbLocal(options: { timeoutMs?: number } = {}): Promise<DynamoDbLocal> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  if (!fs.existsSync(path.join(DYNAMODB_LOCAL_DIR, 'DynamoDBLocal.jar'))) {
    throw new Error(`DynamoDBLocal.jar not found in ${DYNAMODB_LOCAL_DIR}: is amplify-dynamodb-simulator installed?`);
  }
  const port = await freePort();
  const child = spawn(
    'java',
    ['-Djava.library.path=./DynamoDBLocal_lib', '-jar', 'DynamoDBLocal.jar', '-port', String(port), '-inMemory', '-sharedDb', '-disableTelemetry'],
    { cwd: DYNAMODB_LOCAL_DIR, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  running.add(child);
  installExitHook();
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-8_000);
  };
  child.stdout!.on('data', collect);
  child.stderr!.on('data', collect);
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exitPromise = once(child, 'exit').then(([code, signal]) => {
    exited = { code: code as number | null, signal: signal as NodeJS.Signals | null };
    running.delete(child);
  });
  let spawnFailure: Error | undefined;
  child.on('error', (error) => {
    spawnFailure = error;
    running.delete(child);
  });

  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: LOCAL_CREDENTIALS,
    maxAttempts: 1,
    requestHandler: { requestTimeout: 2_000, connectionTimeout: 1_000 },
  });

  const stop = async (): Promise<void> => {
    if (exited || spawnFailure) return;
    child.kill('SIGTERM');
    const killed = await Promise.race([exitPromise.then(() => true), delay(5_000).then(() => false)]);
    if (!killed) {
      child.kill('SIGKILL');
      await exitPromise;
    }
  };

  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (exited) throw new Error(`DynamoDB Local exited early (${exited.code ?? exited.signal}):\n${output}`);
      if (spawnFailure) throw new Error(`could not run java: ${spawnFailure.message}`);
      try {
        await client.send(new ListTablesCommand({}));
        return { endpoint, port, stop };
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`DynamoDB Local did not answer on ${endpoint} within ${timeoutMs} ms:\n${output}`);
      await delay(100);
    }
  } catch (error) {
    await stop();
    throw error;
  } finally {
    client.destroy();
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
