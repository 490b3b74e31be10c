import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { once } from 'node:events';
import { DynamoDBClient, CreateTableCommand, waitUntilTableExists } from '/work/main/node_modules/@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '/work/main/node_modules/@aws-sdk/lib-dynamodb';
import { DynamoLeaseStore } from '/work/main/shared/adapters/dynamodb/leaseStore';
(async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', '/work/main/shared/local/emulatorsMain.ts'], { cwd: '/work/main', stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = await once(readline.createInterface({ input: child.stdout! }), 'line');
  const { dynamodbEndpoint } = JSON.parse(String(line));
  const client = new DynamoDBClient({ endpoint: dynamodbEndpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  await client.send(new CreateTableCommand({ TableName: 'hot-table', BillingMode: 'PAY_PER_REQUEST', AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }, { AttributeName: 'sk', AttributeType: 'S' }], KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'sk', KeyType: 'RANGE' }] }));
  await waitUntilTableExists({ client, maxWaitTime: 30, minDelay: 1 }, { TableName: 'hot-table' });
  const store = new DynamoLeaseStore(DynamoDBDocumentClient.from(client), 'hot-table');
  await store.createPool('hot', 1000);
  for (const c of [1, 4, 16, 64]) {
    let writes = 0; const t0 = Date.now(); const deadline = t0 + 2000; const cpu0 = process.cpuUsage();
    await Promise.all(Array.from({ length: c }, async (_, w) => { for (let i = 0; Date.now() < deadline; i++) { await store.acquire('hot', `w${w}-${i}`, { kind: 'appflow', since: 1 }); await store.release('hot', `w${w}-${i}`); writes += 2; } }));
    const cpu = process.cpuUsage(cpu0);
    console.log(c, Math.round(writes / ((Date.now() - t0) / 1000)), 'writes/s; client cpu', ((cpu.user + cpu.system) / 1000 / (Date.now() - t0)).toFixed(2));
  }
  child.kill(); client.destroy();
})();
