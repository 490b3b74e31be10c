import type { BenchResults } from './runBench';
import type { Scheduler } from './scenarios/utilization';

const NAMES: Record<Scheduler, string> = {
  sluice: 'Sluice',
  poller: 'Status poller (Step Functions design)',
  backoff: 'Counter gate, visibility backoff',
  batches: 'Fixed batches',
};
const ORDER: Scheduler[] = ['sluice', 'poller', 'backoff', 'batches'];

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const s1 = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const n2 = (x: number) => (Math.round(x * 100) / 100).toString();
const usd = (x: number) => `$${x.toFixed(2)}`;

function table(header: string[], rows: Array<Array<string | number>>): string {
  return [`| ${header.join(' | ')} |`, `|${header.map((h) => (/^[A-Z]/.test(h) && !/[0-9]/.test(h) ? '---' : '--:')).join('|')}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
}

/** The headline table (also pasted into the README): one row per scheduler on the same 200-job workload. */
export function headlineTable(r: BenchResults): string {
  if (!r.schedulers) return '';
  return table(
    ['Scheduler', 'makespan', 'utilization', 'efficiency', 'requests per job'],
    ORDER.map((k) => {
      const s = r.schedulers![k];
      return [NAMES[k], s1(s.makespanMs), pct(s.utilization), s.efficiency.toFixed(3), n2(s.requestsPerJob.total)];
    }),
  );
}

export function goalsTable(r: BenchResults): string {
  return table(
    ['Goal', 'target', 'measured', 'met'],
    r.goals.map((g) => [g.goal, g.target, g.measured, g.met ? 'yes' : '**no**']),
  );
}

export function renderResults(r: BenchResults, charts: { concurrencyChart: boolean; requestsChart: boolean }): string {
  const out: string[] = [];
  const p = r.params;
  out.push('# Sluice benchmark results', '');
  out.push(`Run on ${r.date.slice(0, 10)} with \`${r.command}\`, in ${Math.floor(r.durationSeconds / 60)} min ${r.durationSeconds % 60} s.`);
  out.push(
    `Machine: ${r.machine.cores} cores (${r.machine.cpuModel}), ${r.machine.memoryGb} GB, Node ${r.machine.node}, ${r.machine.platform}; emulators (fauxqs, dynalite) ${r.machine.emulators}.`,
    'Everything else (Sluice\'s functions, the AppFlow/Glue simulator, the event bus, the SQS poller, the baselines) runs in the bench process. `bench/results.json` has every number below and more.',
    '',
  );
  out.push('## Goals', '', goalsTable(r), '');
  if (r.schedulers) out.push('## Sluice beside the designs it replaces', '', headlineTable(r), '', utilizationNotes(r), '');
  if (charts.concurrencyChart) out.push('![Runs in progress over time, per scheduler](concurrency.svg)', '');
  if (r.handoff) out.push(...handoffSection(r));
  if (r.requestsPerJob) out.push(...requestsSection(r, charts.requestsChart));
  if (r.throughput) out.push(...throughputSection(r));
  if (r.cost) out.push(...costSection(r));
  out.push(...boundsSection(r));
  if (r.handlerErrors.length) out.push('## Handler errors during the run', '', ...r.handlerErrors.slice(0, 10).map((e) => `- ${e.fn}: ${e.error}`), '');
  out.push(`Parameters: \`${JSON.stringify(p)}\``, '');
  return out.join('\n');
}

function utilizationNotes(r: BenchResults): string {
  const u = r.schedulers!;
  const q = u.params;
  const minutesPerMs = 20 / q.runTimes.medianMs;
  return [
    `${q.jobs} jobs, limit ${q.limit}, log-normal run times: median ${q.runTimes.medianMs} ms, sigma ${q.runTimes.sigma}, clipped to ${q.runTimes.minMs}..${q.runTimes.maxMs} ms (seed ${r.params.seed + 1}).`,
    `Time scale: a 20-minute run is ${q.runTimes.medianMs} ms (1 real minute = ${(q.runTimes.medianMs / 20).toFixed(0)} ms), so the scale is 1/${Math.round(1 / q.timeScale)}.`,
    'Every scheduler gets the same runs in the same order, on the same simulator, all jobs submitted at once.',
    '',
    `- **Utilization**: busy slot-time / (limit x makespan), makespan from the first start call to the last run's end.`,
    `- **Efficiency**: the makespan of the ideal schedule (${q.limit} slots, jobs in order, each starting the moment a slot frees, no latency: ${s1(u.sluice.idealMakespanMs)}) over the measured makespan.`,
    `- **Fixed batches**: ${q.limit} jobs per batch; a tick every ${q.batchIntervalMs} ms (${Math.round(q.batchIntervalMs * minutesPerMs)} real minutes), the expected longest of ${q.limit} runs by Monte Carlo from the distribution (what an operator who knows the distribution, not the runs, would pick). A tick asks the job APIs whether the batch is done and starts the next one only then, so the limit holds; ${u.batches.notes.split('; ')[1] ?? ''}.`,
    `- **Status poller**: starts ${q.limit}, then every ${q.pollMs} ms (${Math.round(q.realPollMs / 60_000)} real minutes) calls GetJobRun / DescribeFlowExecutionRecords for each running job and fills the free slots. ${u.poller.notes}.`,
    `- **Counter gate**: SQS queue on the emulator, 4 pollers, batches of 10; a job is admitted if an in-memory counter is below the limit, else left to come back after its visibility timeout of ${q.backoffSeconds} s (${Math.round(q.backoffSeconds * 1000 * minutesPerMs)} real minutes; SQS takes whole seconds, so this is the shortest possible backoff at this scale); the counter drops on the completion event; nothing wakes a waiting job. ${u.backoff.notes}.`,
    `- **Sluice**: ${u.sluice.notes}.`,
    `- Requests per job: each design's own AWS requests (SQS, DynamoDB, job APIs) plus function invocations (Sluice: acquirer and releaser; batches: one scheduled invocation per tick; poller: the start and getStatus functions its state machine calls, transitions not counted; gate: one per non-empty batch plus one counter decrement per completion). Sluice's count includes its event source's idle long polls and the reconciler, over the whole run.`,
  ].join('\n');
}

function handoffSection(r: BenchResults): string[] {
  const hd = r.handoff!;
  const d = hd.detail;
  const seg = d.segments;
  const out = ['## Hand-off latency', ''];
  out.push(
    `From a completion event reaching the bus to the start call of the job let in by it, at the simulator: **p50 ${hd.p50Ms} ms, p99 ${hd.p99Ms} ms, max ${hd.maxMs} ms** over ${hd.n} hand-offs (mean ${hd.meanMs} ms).`,
    '',
    `Workload: ${d.jobs} jobs, limit ${d.limit}, log-normal runs (median ${d.runTimes.medianMs} ms, sigma ${d.runTimes.sigma}), about ${Math.round((d.n / d.makespanMs) * 1000)} hand-offs per second. The jobs are parked in a paused pool first (limit 0), then the pool is opened: a standing backlog, no arrival burst. The reconciler runs on the stack's compressed schedule.`,
    '',
    '**Method (exact pairing).** The releaser hands a slot over in one conditional write, `REMOVE holders.#from SET holders.#to`; middleware on Sluice\'s own DynamoDB client reads both job ids from that write. The finished job\'s run gives its execution id and so its completion event (timed by the bus\'s `onDeliver` hook when it is put on the bus); the job let in gives its start call (recorded by the simulator when the request arrives). Latency = start call - event put. Jobs let in some other way (the acquirer\'s own fill, the reconciler) are not hand-offs and are counted apart: ' +
      `${d.otherAdmissions} here, besides the first ${d.direct} let in when the pool opened. (AsyncLocalStorage cannot do this attribution: the SDK's keep-alive sockets carry one invocation's async context into another's calls.)`,
    '',
  );
  if (hd.burst) {
    out.push(
      `With the arrival burst (the utilization run: ${r.schedulers?.sluice.jobs ?? '?'} jobs submitted at once, runs of 2 s): p50 ${hd.burst.p50Ms} ms, p99 ${hd.burst.p99Ms} ms, max ${hd.burst.maxMs} ms over ${hd.burst.n} hand-offs.`,
      '',
    );
  }
  out.push(
    'Where the time goes (each segment measured per hand-off):',
    '',
    table(
      ['Segment', 'p50 ms', 'p99 ms', 'max ms'],
      [
        ['event on the bus -> releaser invoked', seg.bus.p50Ms, seg.bus.p99Ms, seg.bus.maxMs],
        ['releaser invoked -> wake-up SendMessage issued', seg.releaser.p50Ms, seg.releaser.p99Ms, seg.releaser.maxMs],
        ['SendMessage issued -> ReceiveMessage returns it', seg.queue.p50Ms, seg.queue.p99Ms, seg.queue.maxMs],
        ['received -> start call at the simulator', seg.acquirer.p50Ms, seg.acquirer.p99Ms, seg.acquirer.maxMs],
      ],
    ),
    '',
    `**Profile: the calls on the hand-off path.** ${d.profile.handoffs} hand-offs traced one at a time (a pool of limit 1, runs of ${d.profile.runMs} ms, nothing else running), so every call between the event and the next start belongs to the hand-off; medians, ms after the event reached the bus (total ${d.profile.totalP50Ms} ms):`,
    '',
    table(
      ['Phase', 'call', 'starts at', 'takes', 'on the path'],
      d.profile.rows.map((row) => [row.phase, row.call, row.atMs, row.ms, row.onPath ? 'yes' : 'no (after the wake-up)']),
    ),
    '',
    `Call latency during the load run (client side, as the functions see it), ms: ${Object.entries(d.callLatency)
      .filter(([, v]) => v.n >= 20)
      .map(([op, v]) => `${op} p50 ${v.p50Ms} / p99 ${v.p99Ms}`)
      .join('; ')}.`,
    '',
  );
  return out;
}

function requestsSection(r: BenchResults, chart: boolean): string[] {
  const rows = Object.values(r.requestsPerJob!).sort((a, b) => a.backlog - b.backlog);
  const p = r.params.requests;
  const out = ['## AWS requests per job against the backlog', ''];
  out.push(
    `Per job, with B jobs waiting in the same pool (limit ${r.params.limit}, runs of ${p.runMinMs}-${p.runMaxMs} ms). **Method**: park B jobs in a paused pool through the real path (SQS, acquirer, waiter items), open the pool, and keep B jobs waiting by enqueueing one new job per completion. After ${p.warmup} completions, count every request Sluice's clients make and every invocation until ${p.window} more have completed, and divide by ${p.window}. A job in the window pays for its whole life: arrival and parking, wake-up, start, completion and the hand-off it makes. Only this steady state scales with the backlog, so only it is measured; parking the backlog is setup. The reconciler is paused here (its cost is per running job and period, see below). The producer's SendMessageBatch is not Sluice's and is not counted.`,
    '',
    table(
      ['Backlog', 'waiting (start -> end)', 'SQS', 'DynamoDB (reads + writes)', 'job APIs', 'invocations', 'total', 'parked in', 'window'],
      rows.map((x) => [
        x.backlog.toLocaleString('en-US'),
        `${x.waitingAtStart} -> ${x.waitingAtEnd}`,
        x.sqs,
        `${x.dynamodb} (${x.dynamodbReads} + ${x.dynamodbWrites})`,
        x.jobApi,
        x.lambda,
        `**${x.total}**`,
        s1(x.parkMs),
        `${x.windowJobs} jobs, ${s1(x.windowMs)}`,
      ]),
    ),
    '',
  );
  if (r.requestsFlatness) out.push(`Spread from the smallest to the largest total: ${(r.requestsFlatness.spread * 100).toFixed(1)}%.`, '');
  const largest = rows[rows.length - 1]!;
  out.push(`Per operation at backlog ${largest.backlog.toLocaleString('en-US')}: ${Object.entries(largest.ops).map(([k, v]) => `${k} ${v}`).join(', ')}.`, '');
  if (r.reconciler) {
    const rc = r.reconciler;
    out.push(
      `**Reconciler** (every 2 minutes on AWS): one run costs ${rc.withoutHolders.total} requests with no job running (${rc.pools} pools registered: a listPools query and reads per pool, one invocation) and ${rc.perHolder.total} more per running job (${Object.entries(rc.perHolder.ops).map(([k, v]) => `${k} ${v}`).join(', ')}). A 20-minute job is checked about 10 times: about ${Math.round(rc.perHolder.total * 10)} requests, the status calls free of charge, whatever the backlog.`,
      '',
    );
  }
  if (chart) out.push('![Requests per job against backlog](requests-per-job.svg)', '');
  return out;
}

function throughputSection(r: BenchResults): string[] {
  const t = r.throughput!;
  const out = ['## Throughput through one pool', ''];
  out.push(
    `${t.jobs} jobs with zero-length runs through one pool of limit ${t.limit}, all enqueued at once: **${t.jobsPerSecond} jobs/s** in steady state (start calls between the 10th and the 90th percentile), ${t.endToEndJobsPerSecond} jobs/s end to end (first start to the pool empty again). At most ${t.maxInUse} slots were held at once (pool item about ${t.maxPoolItemBytes} bytes).`,
    '',
    `Per job on the pool's partition: ${t.poolItemWritesPerJob} writes to the pool item (acquire and release, conditional failures included), ${t.waiterWritesPerJob} to waiter items, ${t.poolPartitionReadsPerJob} reads.`,
    '',
    `- **Emulator**: one hot item takes ${t.emulatorHotItemWritesPerSecond} conditional writes/s (Sluice's lease store, ${r.params.throughput.hotItemConcurrency} acquire/release loops on one item, driven from the bench process), so the hot item alone would allow ${t.emulatorHotItemBoundJobsPerSecond} jobs/s. CPU during the run: bench process ${t.cpu.benchProcess} cores${t.cpu.emulatorProcess !== undefined ? `, emulator process ${t.cpu.emulatorProcess} cores` : ''}, of ${t.cpu.cores}.`,
    `- **AWS**: an item takes 1,000 write units/s; at ${t.poolItemWritesPerJob} writes per job and ${t.awsWriteUnitsPerPoolItemWrite} unit per write (the item is under 1 KB at this concurrency; it grows about 60 bytes per holder, so 1,000 holders cost about 60 units per write), one pool tops out near **${t.awsHotItemBoundJobsPerSecond} jobs/s**. Real jobs run for minutes: at 20 minutes a job and the maximum limit of 1,000, a pool needs under 1 job/s.`,
    '',
  );
  return out;
}

function costSection(r: BenchResults): string[] {
  const c = r.cost!;
  const b = c.breakdown;
  const a = c.assumptions;
  const pr = c.prices;
  const per = r.requestsPerJob![c.fromBacklog]!;
  return [
    '## Cost per million jobs on AWS',
    '',
    `From the requests per job at backlog ${Number(c.fromBacklog).toLocaleString('en-US')} (${per.sqs} SQS + ${a.producerSqsPerJob} for the producer's batched send, ${per.dynamodbWrites} DynamoDB writes, ${per.dynamodbReads} reads, ${per.lambda} invocations) and the reconciler for ${a.jobMinutes}-minute jobs. Prices: ${pr.dated}: SQS $${pr.sqsPerMillionRequests}/M requests; Lambda $${pr.lambdaPerMillionRequests}/M requests and $${pr.lambdaArmPerGbSecond}/GB-s (arm64); DynamoDB on demand $${pr.dynamodbPerMillionWriteUnits}/M write units, $${pr.dynamodbPerMillionReadUnits}/M read units; AWS service events on the default bus free.`,
    '',
    table(
      ['Item', 'per million jobs'],
      [
        ['SQS requests', usd(b.sqs)],
        ['Lambda requests', usd(b.lambdaRequests)],
        [`Lambda duration (${a.invocationMs} ms billed per invocation, ${a.memoryMb} MB)`, usd(b.lambdaDuration)],
        [`DynamoDB writes (${a.unitsPerWrite} unit each)`, usd(b.dynamodbWrites)],
        [`DynamoDB reads (${a.unitsPerRead} unit each, strongly consistent)`, usd(b.dynamodbReads)],
        [`Reconciler (${a.jobMinutes}-minute jobs, every ${a.reconcilePeriodMinutes} min, pool of ${a.limit})`, usd(b.reconciler)],
        ['EventBridge (AWS service events)', usd(b.eventBridge)],
        ['**Total**', `**${usd(b.total)}**`],
      ],
    ),
    '',
    `Not included: the runs themselves (AppFlow per flow run, Glue per DPU-hour) and their API calls, which are the jobs' cost under any scheduler; CloudWatch logs. For comparison, the Step Functions polling design at 17.5 state transitions per 20-minute job (shared/aws-facts.md) costs about ${usd(c.stepFunctionsPollerUsd)} per million jobs in transitions alone.`,
    '',
  ];
}

/** What bounds each goal the run missed, from the run's own numbers. */
function boundsSection(r: BenchResults): string[] {
  const missed = r.goals.filter((g) => !g.met);
  const out = ['## What bounds the missed goals', ''];
  if (missed.length === 0) {
    out.push('Every goal was met in this run.', '');
    return out;
  }
  for (const g of missed) {
    out.push(`### ${g.goal}: ${g.measured} (target ${g.target})`, '');
    if (g.goal.startsWith('hand-off') && r.handoff) out.push(...handoffBound(r));
    else if (g.goal.startsWith('efficiency') && r.schedulers) out.push(...efficiencyBound(r));
    else if (g.goal.startsWith('requests') && r.requestsPerJob) out.push(...flatnessBound(r));
    else if (g.goal.startsWith('throughput') && r.throughput) out.push(...throughputBound(r));
    out.push('');
  }
  return out;
}

function handoffBound(r: BenchResults): string[] {
  const d = r.handoff!.detail;
  const seg = d.segments;
  const worst = (Object.entries(seg) as Array<[string, { p99Ms: number; p50Ms: number }]>).sort((a, b) => b[1].p99Ms - a[1].p99Ms)[0]!;
  const onPath = d.profile.rows.filter((x) => x.onPath && x.ms > 0);
  return [
    `The largest p99 segment is "${worst[0]}" (p99 ${worst[1].p99Ms} ms, p50 ${worst[1].p50Ms} ms). On the path, in order: ${onPath.map((x) => `${x.phase} ${x.call} (${x.ms} ms)`).join(', ')}; ${onPath.length} calls in sequence, ${Math.round(onPath.reduce((s, x) => s + x.ms, 0))} ms of calls out of ${d.profile.totalP50Ms} ms when nothing else runs.`,
  ];
}

function efficiencyBound(r: BenchResults): string[] {
  const s = r.schedulers!.sluice;
  return [`Sluice's makespan is ${s1(s.makespanMs)} against ${s1(s.idealMakespanMs)} for the ideal schedule: ${s1(s.makespanMs - s.idealMakespanMs)} lost over ${s.jobs} jobs.`];
}

function flatnessBound(r: BenchResults): string[] {
  const rows = Object.values(r.requestsPerJob!).sort((a, b) => a.backlog - b.backlog);
  return [`Totals by backlog: ${rows.map((x) => `${x.backlog}: ${x.total}`).join(', ')}.`];
}

function throughputBound(r: BenchResults): string[] {
  const t = r.throughput!;
  return [
    `The hot item alone would allow ${t.emulatorHotItemBoundJobsPerSecond} jobs/s on the emulator; CPU was bench ${t.cpu.benchProcess} and emulators ${t.cpu.emulatorProcess ?? '?'} cores of ${t.cpu.cores}.`,
  ];
}
