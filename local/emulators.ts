import { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import dynalite from 'dynalite';
import { withTransactions } from './dynaliteTransactions';
import { type BrowserRefusal, refuseBrowserRequests, refusalLogger } from './refuseBrowsers';

/**
 * SQS (fauxqs) and DynamoDB (dynalite) emulators, in this process, on 127.0.0.1 only, answering the AWS SDK only: a
 * request a web page sent (it has an Origin or Sec-Fetch-* header) is refused with 403 (local/refuseBrowsers.ts).
 */
export interface Emulators {
  sqsEndpoint: string;
  dynamodbEndpoint: string;
  /**
   * Fault injection: the emulator's listener goes away and comes back on the same port with its data (queues,
   * messages, tables, items) intact, as after a restart of a durable service. See EmulatorRestart.
   */
  restart(which: EmulatorName, options?: EmulatorRestart): Promise<void>;
  close(): Promise<void>;
}

export type EmulatorName = 'sqs' | 'dynamodb' | 'both';

export interface EmulatorRestart {
  /** How long the port refuses connections (default 500 ms). */
  downMs?: number;
  /**
   * Also cut the connections open now, requests in flight included: a request the emulator has applied may then lose
   * its answer, which the SDK retries. Default false: requests in flight finish, new connections are refused.
   */
  dropConnections?: boolean;
}

export interface EmulatorOptions {
  sqsPort?: number;
  dynamodbPort?: number;
  /** Told of each request refused because a web page sent it; by default a line on stderr per emulator, method and origin. */
  onRefused?: (refusal: BrowserRefusal) => void;
}

export async function startEmulators(options: EmulatorOptions = {}): Promise<Emulators> {
  // fauxqs is ESM-only (exports has just an "import" condition), so it is loaded with import().
  const { buildApp } = await import('fauxqs');
  const sqs = buildApp({ logger: false } as never) as unknown as {
    listen(o: { host: string; port: number }): Promise<string>;
    server: { address(): AddressInfo };
    close(): Promise<void>;
  };
  const onRefused = options.onRefused ?? refusalLogger((line) => process.stderr.write(`${line}\n`));
  refuseBrowserRequests(sqs.server as unknown as Server, 'SQS emulator', onRefused);
  await sqs.listen({ host: '127.0.0.1', port: options.sqsPort ?? 0 });
  // TransactWriteItems and TransactGetItems, which dynalite lacks (DynamoDB Local has them).
  const ddb = refuseBrowserRequests(
    withTransactions(dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 })),
    'DynamoDB emulator',
    onRefused,
  );
  await new Promise<void>((resolve, reject) => {
    ddb.once('error', reject);
    ddb.listen(options.dynamodbPort ?? 0, '127.0.0.1', () => resolve());
  });
  const sqsPort = sqs.server.address().port;
  const dynamodbPort = (ddb.address() as AddressInfo).port;
  return {
    sqsEndpoint: `http://127.0.0.1:${sqsPort}`,
    dynamodbEndpoint: `http://127.0.0.1:${dynamodbPort}`,
    async restart(which, restart = {}) {
      // Only the HTTP listeners restart: fauxqs keeps its stores in the app, dynalite in its LevelDB store (dynalite's
      // own close() would close that store too, so the plain http.Server close is used).
      const servers: Array<[Server, number]> = [];
      if (which !== 'dynamodb') servers.push([sqs.server as unknown as Server, sqsPort]);
      if (which !== 'sqs') servers.push([ddb as unknown as Server, dynamodbPort]);
      const outages = servers.map(([server]) => closeListener(server, restart.dropConnections ?? false));
      await new Promise((resolve) => setTimeout(resolve, restart.downMs ?? 500));
      outages.forEach((end) => end());
      await Promise.all(servers.map(([server, port]) => listenAgain(server, port)));
    },
    async close() {
      await sqs.close();
      await new Promise<void>((resolve) => ddb.close(() => resolve()));
    },
  };
}

/** Stops listening at once; returns a function that ends the outage's connection handling. */
function closeListener(server: Server, dropConnections: boolean): () => void {
  Server.prototype.close.call(server);
  if (dropConnections) {
    server.closeAllConnections();
    return () => undefined;
  }
  // Requests in flight finish; keep-alive connections are closed as soon as they are idle, so nothing new gets in.
  server.closeIdleConnections();
  const sweeper = setInterval(() => server.closeIdleConnections(), 5);
  return () => {
    clearInterval(sweeper);
    server.closeIdleConnections();
  };
}

function listenAgain(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    (Server.prototype.listen as (port: number, host: string, done: () => void) => Server).call(server, port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}
