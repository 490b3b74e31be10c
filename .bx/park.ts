import { startHarness } from '/work/main/shared/local/bench/harness';
import { runRequests } from '/work/main/shared/local/bench/scenarios/requests';
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { once } from 'node:events';
(async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', '/work/main/shared/local/emulatorsMain.ts'], { cwd: '/work/main', stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = await once(readline.createInterface({ input: child.stdout! }), 'line');
  const e = JSON.parse(String(line));
  const h = await startHarness({ endpoints: { sqs: e.sqsEndpoint, dynamodb: e.dynamodbEndpoint }, pools: { 'bench-rpj-10000': 0 }, log: console.log });
  const t = Date.now();
  const r = await runRequests(h, { backlogs: [10000], limit: 1, overlapLimit: 8, runMinMs: 5, runMaxMs: 20, warmup: 16, window: 300, seed: 1, timeoutMs: 300000 });
  console.log(Date.now() - t, JSON.stringify(r.byBacklog['10000']!.ops), JSON.stringify(r.overlapping));
  await h.stop(); child.kill();
})();
