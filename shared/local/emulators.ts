import type { AddressInfo } from 'node:net';
import dynalite from 'dynalite';

/** SQS (fauxqs) and DynamoDB (dynalite) emulators, in this process, on loopback only. */
export interface Emulators {
  sqsEndpoint: string;
  dynamodbEndpoint: string;
  close(): Promise<void>;
}

export interface EmulatorOptions {
  sqsPort?: number;
  dynamodbPort?: number;
}

export async function startEmulators(options: EmulatorOptions = {}): Promise<Emulators> {
  // fauxqs is ESM-only (exports has just an "import" condition), so it is loaded with import().
  const { buildApp } = await import('fauxqs');
  const sqs = buildApp({ logger: false } as never) as unknown as {
    listen(o: { host: string; port: number }): Promise<string>;
    server: { address(): AddressInfo };
    close(): Promise<void>;
  };
  await sqs.listen({ host: '127.0.0.1', port: options.sqsPort ?? 0 });
  const ddb = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    ddb.once('error', reject);
    ddb.listen(options.dynamodbPort ?? 0, '127.0.0.1', () => resolve());
  });
  return {
    sqsEndpoint: `http://127.0.0.1:${sqs.server.address().port}`,
    dynamodbEndpoint: `http://127.0.0.1:${(ddb.address() as AddressInfo).port}`,
    async close() {
      await sqs.close();
      await new Promise<void>((resolve) => ddb.close(() => resolve()));
    },
  };
}
