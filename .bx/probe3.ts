import { startHarness } from '/work/main/shared/local/bench/harness';
import { DynamoLeaseStore } from '/work/main/shared/adapters/dynamodb/leaseStore';
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { once } from 'node:events';
(async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', '/work/main/shared/local/emulatorsMain.ts'], { cwd: '/work/main', stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = await once(readline.createInterface({ input: child.stdout! }), 'line');
  const e = JSON.parse(String(line));
  const h = await startHarness({ endpoints: { sqs: e.sqsEndpoint, dynamodb: e.dynamodbEndpoint }, pools: { 'bench-tput': 1000 }, log: console.log });
  const store = new DynamoLeaseStore(h.own.doc, h.stack.tableName);
  await store.createPool('hotx', 1000);
  for (const c of [1, 4, 16, 32, 4]) {
    let writes = 0, fails = 0; const t0 = Date.now(); const deadline = t0 + 2000;
    await Promise.all(Array.from({ length: c }, async (_, w) => { for (let i = 0; Date.now() < deadline; i++) { const o = await store.acquire('hotx', `c${c}w${w}-${i}`, { kind: 'appflow', since: 1 }); if (o !== 'acquired') fails++; await store.release('hotx', `c${c}w${w}-${i}`); writes += 2; } }));
    const p = await store.getPool('hotx');
    console.log(c, Math.round(writes / ((Date.now() - t0) / 1000)), 'writes/s', 'fails', fails, 'inUse', p?.inUse, JSON.stringify(p).length);
  }
  await h.stop(); child.kill();
})();
