import { startHarness } from '/work/main/shared/local/bench/harness';
import { runThroughput } from '/work/main/shared/local/bench/scenarios/throughput';
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { once } from 'node:events';
(async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', '/work/main/shared/local/emulatorsMain.ts'], { cwd: '/work/main', stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = await once(readline.createInterface({ input: child.stdout! }), 'line');
  const e = JSON.parse(String(line));
  const h = await startHarness({ endpoints: { sqs: e.sqsEndpoint, dynamodb: e.dynamodbEndpoint }, pools: { 'bench-tput': 1000 }, log: console.log });
  for (let i = 0; i < 4; i++) await runThroughput(h, { pool: 'bench-tput', jobs: 1, limit: 1000, runMs: 50, hotItemSeconds: 2, hotItemConcurrency: 32, timeoutMs: 120000 }, 2).catch(() => 0);
  await h.stop(); child.kill();
})();
