import { startHarness } from '/work/main/shared/local/bench/harness';
import { runThroughput } from '/work/main/shared/local/bench/scenarios/throughput';
(async () => {
  const h = await startHarness({ pools: { 'bench-tput': 1000 }, log: console.log });
  const before = h.stack.requests.snapshot();
  const r = await runThroughput(h, { pool: 'bench-tput', jobs: 300, limit: 1000, hotItemSeconds: 1, hotItemConcurrency: 1, timeoutMs: 60000 }, 2);
  const after = h.stack.requests.snapshot();
  const d: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) d[k] = (v - (before[k] ?? 0)) / 300;
  console.log(d);
  console.log('unknown', h.tracer.unknownRuns, 'healed', h.healed, 'transfers', h.tracer.transferAttempts, h.tracer.transferFailures, 'errors', h.handlerErrors.slice(0, 3));
  console.log(h.tracer.partitions);
  await h.stop();
})();
