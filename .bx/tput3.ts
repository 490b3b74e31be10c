import { startHarness } from '/work/main/shared/local/bench/harness';
import { runThroughput } from '/work/main/shared/local/bench/scenarios/throughput';
import { runRequests } from '/work/main/shared/local/bench/scenarios/requests';
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { once } from 'node:events';
(async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', '/work/main/shared/local/emulatorsMain.ts'], { cwd: '/work/main', stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = await once(readline.createInterface({ input: child.stdout! }), 'line');
  const e = JSON.parse(String(line));
  const h = await startHarness({ endpoints: { sqs: e.sqsEndpoint, dynamodb: e.dynamodbEndpoint }, pools: { 'bench-tput': 1000, 'bench-rpj-10': 0 }, log: console.log });
  if (process.argv[2] === 'req') await runRequests(h, { backlogs: [10], limit: 4, runMinMs: 5, runMaxMs: 20, warmup: 4, window: 20, seed: 1, timeoutMs: 20000 });
  const p0 = await h.getPool('bench-tput'); console.log('pool before', JSON.stringify(p0));
  let t = setInterval(async () => { const p = await h.getPool('bench-tput'); console.log('limit', p?.limit, 'inUse', p?.inUse, 'holders', Object.keys(p?.holders ?? {}).length, 'waiters', await h.countWaiters('bench-tput')); }, 500);
  const r = await runThroughput(h, { pool: 'bench-tput', jobs: 150, limit: 1000, runMs: 50, hotItemSeconds: 0.5, hotItemConcurrency: 8, timeoutMs: 120000 }, 2);
  clearInterval(t);
  console.log(r.jobsPerSecond, r.poolItemWritesPerJob, r.waiterWritesPerJob, h.handlerErrors.slice(0,3));
  await h.stop(); child.kill();
})();
