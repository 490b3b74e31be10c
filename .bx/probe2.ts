import { startHarness } from '/work/main/shared/local/bench/harness';
import { DynamoLeaseStore } from '/work/main/shared/adapters/dynamodb/leaseStore';
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
(async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', '/work/main/shared/local/emulatorsMain.ts'], { cwd: '/work/main', stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = await once(readline.createInterface({ input: child.stdout! }), 'line');
  const e = JSON.parse(String(line));
  const h = await startHarness({ endpoints: { sqs: e.sqsEndpoint, dynamodb: e.dynamodbEndpoint }, pools: { 'bench-tput': 1000 }, log: console.log });
  const store = new DynamoLeaseStore(h.own.doc, h.stack.tableName);
  await store.createPool('hotx', 1000);
  for (let i = 0; i < 10; i++) { const t = performance.now(); await store.acquire('hotx', 'a' + i, { kind: 'appflow', since: 1 }); const t2 = performance.now(); await store.release('hotx', 'a' + i); console.log('acq', (t2 - t).toFixed(1), 'rel', (performance.now() - t2).toFixed(1)); }
  let lag = 0; const iv = setInterval(() => {}, 1000);
  const t0 = performance.now(); await new Promise((r) => setTimeout(r, 100)); console.log('timer 100ms took', (performance.now() - t0).toFixed(1));
  clearInterval(iv);
  await h.stop(); child.kill();
})();
