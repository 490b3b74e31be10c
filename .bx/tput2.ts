import { startHarness } from '/work/main/shared/local/bench/harness';
import { runThroughput } from '/work/main/shared/local/bench/scenarios/throughput';
import { spawn } from 'node:child_process';
import readline from 'node:readline';
import { once } from 'node:events';
(async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', '/work/main/shared/local/emulatorsMain.ts'], { cwd: '/work/main', stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = await once(readline.createInterface({ input: child.stdout! }), 'line');
  const e = JSON.parse(String(line));
  const pollers = Number(process.argv[2]);
  const h = await startHarness({ endpoints: { sqs: e.sqsEndpoint, dynamodb: e.dynamodbEndpoint }, pollerConcurrency: pollers, pools: { 'bench-tput': 1000 }, log: console.log });
  const r = await runThroughput(h, { pool: 'bench-tput', jobs: 1500, limit: 1000, runMs: 50, hotItemSeconds: 1, hotItemConcurrency: 16, emulatorPid: child.pid, timeoutMs: 120000 }, 2);
  console.log('pollers', pollers, r.jobsPerSecond, r.poolItemWritesPerJob, r.cpu);
  await h.stop(); child.kill();
})();
