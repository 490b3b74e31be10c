import { startHarness, sleep } from '/work/main/shared/local/bench/harness';
import { runRequests } from '/work/main/shared/local/bench/scenarios/requests';
import { GetCommand } from '/work/main/node_modules/@aws-sdk/lib-dynamodb';
(async () => {
  const h = await startHarness({ pools: { 'bench-rpj-100': 0, 'bench-rpj-101': 0 }, log: console.log });
  for (const b of [100, 101]) {
  try {
    await runRequests(h, { backlogs: [b], limit: 4, runMinMs: 5, runMaxMs: 20, warmup: 4, window: 20, seed: 1, timeoutMs: 20000 });
  } catch (e) {
    console.log(String(e));
    const pool = await h.getPool('bench-rpj-' + b);
    console.log(JSON.stringify(pool));
    for (const id of Object.keys(pool!.holders)) {
      const { Item } = await h.own.doc.send(new GetCommand({ TableName: h.stack.tableName, Key: { pk: `JOB#${id}`, sk: 'JOB' }, ConsistentRead: true }));
      console.log(JSON.stringify(Item));
      console.log('sends', h.tracer.sends.get(id), 'receives', h.tracer.receives.get(id), 'transfer', h.tracer.transfers.get(id));
      console.log('runs', h.stack.simulator.runs().filter(r => r.clientToken === 'sluice-' + id || r.args['--sluice-job-id'] === id));
    }
    console.log(h.handlerErrors);
  }
  }
  await h.stop();
})();
