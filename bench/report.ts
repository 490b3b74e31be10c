import { WEIGHTS_UTILIZATION_GOAL, weightsGoalMet, type WeightsRound } from './scenarios/flowControl';
import { BACKFILL_LOOKAHEAD } from '../shared/app/backfill';
import type { ThroughputResult } from './scenarios/throughput';
import type { BenchResults } from './runBench';
import type { Scheduler } from './scenarios/utilization';
import type { EarlyCompletions } from './tracer';

const NAMES: Record<Scheduler, string> = {
  sluice: 'Sluice',
  poller: 'Status poller (Step Functions design)',
  backoff: 'Counter gate, visibility backoff',
  batches: 'Fixed batches',
};
const ORDER: Scheduler[] = ['sluice', 'poller', 'backoff', 'batches'];

export const HEADLINE_CAVEAT =
  "Requests are not dollars. Sluice's are mostly DynamoDB writes ($0.625 per million) and do not grow with the backlog; the poller's status calls ride on Step Functions state transitions ($25 per million, not counted here), and the gate's receives grow with the backlog (see the chart below). Cost per million jobs: further down.";

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const s1 = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
const round1 = (x: number) => Math.round(x * 10) / 10;
const n2 = (x: number) => (Math.round(x * 100) / 100).toString();
const usd = (x: number) => `$${x.toFixed(2)}`;

/** A Markdown table. `align` has one letter per column, l or r; by default the first column is text, the rest numbers. */
function table(header: string[], rows: Array<Array<string | number>>, align = `l${'r'.repeat(header.length - 1)}`): string {
  const rule = header.map((_, i) => (align[i] === 'l' ? '---' : '--:')).join('|');
  return [`| ${header.join(' | ')} |`, `|${rule}|`, ...rows.map((r) => `| ${r.join(' | ')} |`)].join('\n');
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

const metCell = (g: BenchResults['goals'][number]) => g.status ?? (g.met ? 'yes' : '**no**');

/** Issue 23's goals (busy pools), in its table's order: the figure before its work beside this run's. */
export function busyPoolGoalsTable(r: BenchResults): string {
  return table(
    ['measure', 'before', 'goal', 'measured', 'met'],
    r.goals.filter((g) => g.issue === 23).map((g) => [g.goal, g.before ?? '', g.target, g.measured, metCell(g)]),
    'lllll',
  );
}

export function goalsTable(r: BenchResults): string {
  return table(
    ['Goal', 'target', 'earlier figure', 'measured', 'met'],
    r.goals.filter((g) => g.issue !== 23).map((g) => [g.goal, g.target, g.before ?? '', g.measured, metCell(g)]),
    'lllll',
  );
}

export function renderResults(r: BenchResults, charts: { concurrencyChart: boolean; requestsChart: boolean }): string {
  const out: string[] = [];
  const p = r.params;
  out.push('# Sluice benchmark results', '');
  out.push(
    `Run on ${r.date.slice(0, 10)} with \`${r.command}\`, in ${Math.floor(r.durationSeconds / 60)} min ${r.durationSeconds % 60} s${scenarioTimes(r)}.`,
  );
  out.push(
    `Machine: ${r.machine.cores} cores (${r.machine.cpuModel}), ${r.machine.memoryGb} GB, Node ${r.machine.node}, ${r.machine.platform}; emulators (fauxqs, dynalite) ${r.machine.emulators}${r.capacity ? '; the capacity run uses DynamoDB Local (its jar, Java 17) in a process of its own' : ''}. Load average (1/5/15 min) ${r.machine.loadAverage.start.join('/')} at the start, ${r.machine.loadAverage.end.join('/')} at the end: other work on the machine shows up as latency.`,
    "Everything else (Sluice's functions, the AppFlow/Glue simulator, the event bus, the SQS poller, the baselines) runs in the bench process. `bench/results.json` has every number below and more.",
    '',
  );
  if (r.goals.some((g) => g.issue === 23))
    out.push(
      '## Goals: busy pools',
      '',
      'Each row from this one run, beside the figure before the work on busy pools (hand-off spreading, backfill, unlimited pools); every missed goal has what bounds it, measured, [further down](#what-bounds-the-missed-goals-and-what-would-lift-them).',
      '',
      busyPoolGoalsTable(r),
      '',
    );
  out.push('## Earlier goals', '', goalsTable(r), '');
  if (r.schedulers)
    out.push('## Sluice beside the designs it replaces', '', headlineTable(r), '', HEADLINE_CAVEAT, '', utilizationNotes(r), '');
  if (charts.concurrencyChart) out.push('![Runs in progress over time, per scheduler](concurrency.svg)', '');
  if (r.handoff) out.push(...handoffSection(r));
  if (r.burst) out.push(...burstSection(r));
  if (r.requestsPerJob) out.push(...requestsSection(r, charts.requestsChart));
  if (r.throughput) out.push(...throughputSection(r));
  if (r.fairness || r.weights || r.rateLimit) out.push(...flowControlSection(r));
  if (r.race) out.push(...raceSection(r));
  if (r.schedule) out.push(...scheduleSection(r));
  if (r.hotspot) out.push(...hotspotSection(r));
  if (r.capacity) out.push(...capacitySection(r));
  if (r.cost) out.push(...costSection(r));
  out.push(...boundsSection(r));
  if (r.handlerErrors.length)
    out.push('## Handler errors during the run', '', ...r.handlerErrors.slice(0, 10).map((e) => `- ${e.fn}: ${e.error}`), '');
  out.push(`Parameters: \`${JSON.stringify(p)}\``, '');
  return out.join('\n');
}

/** ` (handoff 95 s, burst 120 s, ...)`: each scenario's wall-clock seconds, setup included, in the order they ran. */
function scenarioTimes(r: BenchResults): string {
  const entries = Object.entries(r.scenarioSeconds ?? {});
  return entries.length ? ` (${entries.map(([name, s]) => `${name} ${s} s`).join(', ')})` : '';
}

function utilizationNotes(r: BenchResults): string {
  const u = r.schedulers!;
  const q = u.params;
  const minutesPerMs = 20 / q.runTimes.medianMs;
  return [
    `${q.jobs} jobs, limit ${q.limit}, log-normal run times: median ${q.runTimes.medianMs} ms, sigma ${q.runTimes.sigma}, clipped to ${q.runTimes.minMs}..${q.runTimes.maxMs} ms (seed ${r.params.seed + 1}).`,
    `Time scale: a 20-minute run is ${q.runTimes.medianMs} ms (1 real minute = ${(q.runTimes.medianMs / 20).toFixed(0)} ms), so the scale is 1/${Math.round(1 / q.timeScale)}.`,
    `Every scheduler gets the same runs in the same order, all jobs submitted at once, on the same job API simulator code: Sluice alone on the stack's simulator, then the status poller and the counter gate side by side on it${q.batchesBesideSluice ? "; the fixed batches from Sluice's start on, beside the others, on an instance of their own that emits no completion events (a tick asks the job APIs: it needs none; on the stack's simulator their events would reach Sluice's releaser and count as Sluice's requests)" : ', the fixed batches with them'}.`,
    '',
    `- **Utilization**: busy slot-time / (limit x makespan), makespan from the first start call to the last run's end.`,
    `- **Efficiency**: the makespan of the ideal schedule (${q.limit} slots, jobs in order, each starting the moment a slot frees, no latency: ${s1(u.sluice.idealMakespanMs)}) over the measured makespan.`,
    `- **Fixed batches**: ${q.limit} jobs per batch; a tick every ${q.batchIntervalMs} ms (${Math.round(q.batchIntervalMs * minutesPerMs)} real minutes), the expected longest of ${q.limit} runs by Monte Carlo from the distribution (what an operator who knows the distribution, not the runs, would pick). A tick asks the job APIs whether the batch is done and starts the next one only then, so the limit holds; ${u.batches.notes.split('; ')[1] ?? ''}.`,
    `- **Status poller**: starts ${q.limit}, then every ${q.pollMs} ms (${Math.round(q.realPollMs / 60_000)} real minutes) calls GetJobRun / DescribeFlowExecutionRecords for each running job and fills the free slots. ${u.poller.notes}.`,
    `- **Counter gate**: SQS queue on the emulator, 4 pollers, batches of 10; a job is admitted if an in-memory counter is below the limit, else left to come back after its visibility timeout of ${q.backoffSeconds} s (${Math.round(q.backoffSeconds * 1000 * minutesPerMs)} real minutes; SQS takes whole seconds, so this is the shortest possible backoff at this scale); the counter drops on the completion event; nothing wakes a waiting job. ${u.backoff.notes}.`,
    `- **Sluice**: ${u.sluice.notes}${reconcilerShare(r)}. Its requests on the job path alone, flat in the backlog, are measured below. ${sluiceEarly(r)}`,
    `- Requests per job: each design's own AWS requests (SQS, DynamoDB, job APIs) plus function invocations (Sluice: acquirer and releaser; batches: one scheduled invocation per tick; poller: the start and getStatus functions its state machine calls, transitions not counted; gate: one per non-empty batch plus one counter decrement per completion). Sluice's count includes its event source's idle long polls and the reconciler, over the whole run.`,
  ].join('\n');
}

/** ", N stale, N over a lowered limit, N conflicts" for the pass cancellations that were not lost races. */
function passOtherReasons(reasons: { stale: number; overLimit: number; conflict: number; other: number }): string {
  const parts = [
    reasons.stale ? `${reasons.stale} because the finished job's record had changed` : '',
    reasons.overLimit ? `${reasons.overLimit} because the pool was over a lowered limit` : '',
    reasons.conflict ? `${reasons.conflict} by a conflict with another transaction on one of the items` : '',
    reasons.other ? `${reasons.other} for other reasons` : '',
  ].filter(Boolean);
  return parts.length ? `; ${parts.join(', ')}` : '';
}

function sluiceEarly(r: BenchResults): string {
  const s = r.schedulers?.sluice;
  const early = s?.earlyCompletions ? earlyText(s.earlyCompletions) : 'not measured';
  return `Early completions (events that beat the acquirer's write of the run record): ${early}. Slots its reconciler freed: ${reconcilerFreedText(s?.reconcilerFreedSlots ?? 0, s?.reconcilerDrift, s?.releasedBeforeEvent ?? 0)}.`;
}

const DRIFT_TEXT: Record<string, string> = {
  'lost-event': 'a run found ended before its completion event freed the slot',
  'leaked-slot': 'a slot held by a finished job',
  'orphan-slot': 'a slot held by a job the ledger does not know',
  'lost-wake-up': 'a reserved waiter sent again',
  'stalled-start': 'a stalled start sent again',
  'run-gone': 'a run the job API no longer knows, ended as failed',
  'idle-slot': 'free slots filled',
};

/** What the reconciler put right, in words: "nothing", or "lost-event 1 (a run found ended ...)". */
function driftText(drift: Record<string, number> | undefined): string {
  const entries = Object.entries(drift ?? {});
  if (entries.length === 0) return 'nothing';
  return entries.map(([k, n]) => `${k} ${n} (${DRIFT_TEXT[k] ?? k})`).join(', ');
}

/**
 * Slots the periodic reconciler freed during a run, and why. No fault is injected in these runs, so a slot it frees
 * belonged to a run that had just ended, with its releaser at work: the reconciler got there first and the releaser
 * then found the slot free (a race, not a leak). `releasedBeforeEvent` counts those passed on before the releaser even
 * had the event.
 */
function reconcilerFreedText(freed: number, drift: Record<string, number> | undefined, releasedBeforeEvent: number): string {
  if (freed === 0) return `0 (it put right: ${driftText(drift)})`;
  return `${freed} (${driftText(drift)}). No fault is injected here: the reconciler reached a run that had just ended before its releaser had passed the slot on, and the releaser then found the slot free (a race with a releaser at work, not a leak${releasedBeforeEvent > 0 ? `; ${releasedBeforeEvent} of these slots were passed on before the releaser had the run's completion event` : ''})`;
}

/** "0", or "5 (noted, then completed by the acquirer when it recorded the run: 5)" and what else happened to them. */
export function earlyText(e: EarlyCompletions): string {
  if (e.events === 0 && e.noted === 0) return '0';
  const parts = [`noted, then completed by the acquirer when it recorded the run: ${e.completedByAcquirer}`];
  const recordedMeanwhile = e.events - e.noted;
  if (recordedMeanwhile > 0) parts.push(`found the run recorded a moment later, completed by the releaser: ${recordedMeanwhile}`);
  if (e.noted !== e.completedByAcquirer) parts.push(`noted but not handed back: ${e.noted - e.completedByAcquirer}`);
  return `${e.events} (${parts.join('; ')})`;
}

function reconcilerShare(r: BenchResults): string {
  const runs = r.schedulers?.sluice.requestsPerJob.ops['lambda.reconciler'];
  if (!r.reconciler || !runs) return '';
  return `; its runs (visiting every pool the bench registered, ${r.reconciler.pools}) account for about ${n2(runs * r.reconciler.withHolders.total)} of the ${n2(r.schedulers!.sluice.requestsPerJob.total)} requests per job`;
}

function handoffSection(r: BenchResults): string[] {
  const hd = r.handoff!;
  const d = hd.detail;
  const seg = d.segments;
  const out = ['## Hand-off latency', ''];
  out.push(
    `From a completion event reaching the bus to the start call of the job let in by it, at the simulator: **p50 ${hd.p50Ms} ms, p99 ${hd.p99Ms} ms** (${runsText(hd.spread)}); the median run: max ${hd.maxMs} ms over ${hd.n} hand-offs (mean ${hd.meanMs} ms). The figures below are that run's.`,
    '',
    `Workload: ${d.jobs} jobs, limit ${d.limit}, log-normal runs (median ${d.runTimes.medianMs} ms, sigma ${d.runTimes.sigma}), about ${Math.round((d.n / d.makespanMs) * 1000)} hand-offs per second. The jobs are parked in a paused pool first (limit 0; written as the acquirer parks them, by the bench, as setup), then the pool is opened: a standing backlog, no arrival burst. The reconciler runs on the stack's compressed schedule.`,
    '',
    "**Method (exact pairing).** The releaser hands a slot over in one transaction, its pass: a TransactWriteItems of a ConditionCheck on the pool counter (`POOL#<pool>`: not over its limit), an Update of the finished job's record (fenced by its version and `holderPool = :pool`; `REMOVE holderPool`) and an Update of the waiting job's record (`SET #state = :starting, ..., holderPool = :pool`: the releaser starts that job itself, so the pass writes its start attempt, and no claim follows). Middleware on Sluice's own DynamoDB client reads both job ids from the transaction's keys. The finished job's run gives its execution id and so its completion event (timed by the bus's `onDeliver` hook when it is put on the bus); the job let in gives its start call (recorded by the simulator when the request arrives). Latency = start call - event put. Jobs let in some other way (a free slot filled by the pool admin or the reconciler, a take) are not hand-offs and are counted apart: " +
      `${d.otherAdmissions} here, besides the first ${d.direct} let in when the pool opened. (AsyncLocalStorage cannot do this attribution: the SDK's keep-alive sockets carry one invocation's async context into another's calls.)`,
    '',
  );
  out.push(
    `Races between releasers: ${d.transferWrites.failed} of ${d.transferWrites.attempts} pass transactions were cancelled, ${d.transferWrites.reasons.targetGone} of them because another releaser had just reserved the same waiter (the Update of the waiting job's record failed: no longer queued or waiting without a slot)${passOtherReasons(d.transferWrites.reasons)}. The loser reads the waiting list again (its first read is as old as the race it lost), takes a new hand-off ticket after that read and offers its slot to the waiter it points at; whoever reserved the waiter sends it, and ${d.wakeUpsPerHandoff.toFixed(2)} wake-up messages were sent per hand-off (1 is the minimum). Hand-offs whose releaser won its first pass: p50 ${d.firstTry.p50Ms} ms, p99 ${d.firstTry.p99Ms} ms (${d.firstTry.n}); whose releaser lost a race first: p50 ${d.afterLostRace.p50Ms} ms, p99 ${d.afterLostRace.p99Ms} ms (${d.afterLostRace.n}). From its first pass to the one that went through, such a releaser spent p50 ${d.transferPhase.afterLostRace.p50Ms} ms, p99 ${d.transferPhase.afterLostRace.p99Ms} ms, against p50 ${d.transferPhase.firstTry.p50Ms} ms, p99 ${d.transferPhase.firstTry.p99Ms} ms for a single transaction.`,
    '',
    `Early completions (events that came before the acquirer had recorded the run): ${earlyText(d.earlyCompletions)}. Slots the periodic reconciler freed during the run: ${reconcilerFreedText(d.reconcilerFreedSlots, d.reconcilerDrift, d.releasedBeforeEvent)}. Reconciler runs the bench had to ask for to free a stalled pool: ${d.reconcilerHeals}.`,
    '',
    `The bench process during the load run (Sluice's functions, the simulator, the bus and the event source share its one event loop): ${d.process.cpuCores} cores of CPU, the event loop busy ${pct(d.process.eventLoopUtilization)} of the time, timers run late by p50 ${d.process.eventLoopDelayP50Ms} ms, p99 ${d.process.eventLoopDelayP99Ms} ms${d.process.emulatorCpuCores !== undefined ? `; the emulators' process (fauxqs and dynalite, one event loop): ${d.process.emulatorCpuCores} cores` : ''}.`,
    '',
  );
  if (hd.burst) {
    out.push(
      `With the arrival burst (the utilization run: ${r.schedulers?.sluice.jobs ?? '?'} jobs submitted at once, runs of 2 s): p50 ${hd.burst.p50Ms} ms, p99 ${hd.burst.p99Ms} ms, max ${hd.burst.maxMs} ms over ${hd.burst.n} hand-offs.`,
      '',
    );
  }
  const segmentRows: Array<[string, { n: number; p50Ms: number; p99Ms: number; maxMs: number }]> = [
    ['event on the bus -> releaser invoked', seg.bus],
    ['releaser invoked -> its own start call at the simulator (one hop)', seg.releaserStart],
    ['releaser invoked -> wake-up SendMessage issued (by the queue)', seg.releaser],
    ['SendMessage issued -> ReceiveMessage returns it', seg.queue],
    ['received -> start call at the simulator', seg.acquirer],
  ];
  out.push(
    `Where the time goes (each segment measured per hand-off; ${d.oneHop} of ${d.n} hand-offs were started by the releaser itself, one hop, the rest by a wake-up message):`,
    '',
    table(
      ['Segment', 'n', 'p50 ms', 'p99 ms', 'max ms'],
      segmentRows.filter(([, x]) => x.n > 0).map(([label, x]) => [label, x.n, x.p50Ms, x.p99Ms, x.maxMs]),
    ),
    '',
    `**Profile: the calls on the hand-off path.** ${d.profile.handoffs} hand-offs traced one at a time (a pool of limit 1, runs of ${d.profile.runMs} ms, nothing else running), so every call between the event and the next start belongs to the hand-off; medians, ms after the event reached the bus (total ${d.profile.totalP50Ms} ms):`,
    '',
    table(
      ['Phase', 'call', 'starts at', 'takes', 'on the path'],
      d.profile.rows.map((row) => [row.phase, row.call, row.atMs, row.ms, row.onPath ? 'yes' : 'no']),
      'llrrl',
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
    `Per job, with B jobs waiting in the same pool (runs of ${p.runMinMs}-${p.runMaxMs} ms, limit ${p.limit}). **Method**: park B jobs in a paused pool (written as the acquirer parks a job that finds its pool full: one transaction with the job's record, waiting, and its waiter item; by the bench, many at a time, as setup), open the pool, and keep B jobs waiting by enqueueing one new job per completion (through the real path: SQS, the acquirer, its park). After ${p.warmup} completions, count every request Sluice's clients make and every invocation until ${p.window} more have completed, and divide by ${p.window}. A job in the window pays for its whole life: arrival and parking, wake-up, start, completion and the hand-off it makes. Only this steady state scales with the backlog, so only it is measured; parking the backlog is setup. Limit ${p.limit} keeps hand-offs from overlapping, as they almost never do with 20-minute runs (the overlapping case is measured below). The reconciler is paused (its cost is per running job and period, below). Not counted: the producer's SendMessageBatch, and the job queue's empty receives (fauxqs wakes every waiting long poll for each message and the losers return empty, which SQS does not do; ${rows.map((x) => x.emptyReceives).join(', ')} per job here).`,
    '',
    table(
      [
        'Backlog',
        'waiting (start -> end)',
        'SQS',
        'DynamoDB reads',
        'DynamoDB writes',
        'job APIs',
        'invocations',
        'events put',
        'total',
        'parked in',
        'window',
      ],
      rows.map((x) => [
        x.backlog.toLocaleString('en-US'),
        `${x.waitingAtStart.toLocaleString('en-US')} -> ${x.waitingAtEnd.toLocaleString('en-US')}`,
        x.sqs,
        x.dynamodbReads,
        x.dynamodbWrites,
        x.jobApi,
        x.lambda,
        x.events,
        `**${x.total}**`,
        s1(x.parkMs),
        `${x.windowJobs} jobs, ${s1(x.windowMs)}`,
      ]),
    ),
    '',
  );
  if (r.requestsFlatness) {
    out.push(
      `Spread from the smallest to the largest total: ${(r.requestsFlatness.spread * 100).toFixed(1)}%. Early completions in the windows (a run that ended before the acquirer had recorded it): ${rows.map((x) => x.earlyCompletions.events).join(', ')}. Reconciler runs the windows needed because a pool stalled with a slot held: ${rows.map((x) => x.heals).join(', ')} (their requests would be in the counts).`,
      '',
    );
  }
  const largest = rows[rows.length - 1]!;
  out.push(`Per operation at backlog ${largest.backlog.toLocaleString('en-US')}: ${opsList(largest.ops)}.`, '');
  const o = r.requestsOverlapping;
  if (o) {
    out.push(
      `**Overlapping hand-offs.** The same pool at limit ${o.limit} (backlog ${o.backlog.toLocaleString('en-US')}, ${o.windowJobs} jobs in ${s1(o.windowMs)}): **${o.total}** requests per job. Completions now come close together and releasers race for the same waiter: ${o.transferFailures} of ${o.transferAttempts} pass transactions were cancelled, ${o.passFailures?.targetGone ?? '?'} of them lost races. Each lost race costs the cancelled transaction, a read of the waiting job's record, and (when both waiters its query read are taken) another query for the next waiter; the waiter itself is sent once (${o.wakeUpsPerJob} wake-up messages per job). Per operation: ${opsList(o.ops)}.`,
      '',
    );
  }
  if (r.reconciler) {
    const rc = r.reconciler;
    out.push(
      `**Reconciler** (every 2 minutes on AWS): one run costs ${rc.withoutHolders.total} requests with no job running (${rc.pools} pools registered: a listPools query and reads per pool, one invocation) and ${rc.perHolder.total} more per running job (${opsList(rc.perHolder.ops)}). A 20-minute job is checked about 10 times: about ${Math.round(rc.perHolder.total * 10)} requests, the status calls free of charge, whatever the backlog. Only the reconciler's own calls are counted (a release or an idle poll during a run is not its cost)${rc.putRight ? `; the two runs put right: ${driftText(rc.putRight)}` : ''}.`,
      '',
    );
  }
  if (chart) out.push('![Requests per job against backlog](requests-per-job.svg)', '');
  return out;
}

const opsList = (ops: Record<string, number>) =>
  Object.entries(ops)
    .filter(([, v]) => v > 0)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');

function throughputSection(r: BenchResults): string[] {
  const t = r.throughput!;
  const out = ['## Throughput through one pool', ''];
  out.push(
    `${t.jobs.toLocaleString('en-US')} jobs with runs of ${t.runMs} ms through one pool of limit ${t.limit}, all enqueued at once, ${r.params.pollers} event-source pollers: **${t.jobsPerSecond} jobs/s** in steady state (start calls between the 10th and the 90th percentile), ${t.endToEndJobsPerSecond} jobs/s end to end (first start to the pool empty again). At most ${t.maxInUse} slots were held at once; the pool item stayed a counter of ${t.maxPoolItemBytes} bytes (limit and inUse: the slots are leases on the job records, so it does not grow with them).`,
    '',
    `Early completions (${t.runMs === 0 ? 'a zero-length run can end, and its event reach the releaser, before the acquirer has written the run record' : 'events that came before the acquirer had written the run record'}): ${earlyText(t.earlyCompletions)}. The releaser notes such an event on the run's key (a conditional PutItem); the acquirer's write of the run record hands the note back and the acquirer completes the run at once. Reconciler runs needed to free slots: ${t.reconcilerRuns} (slots freed that way: ${t.reconcilerFreedSlots}).`,
    '',
    `Per job on the pool's partition: ${t.poolItemWritesPerJob} writes to the pool counter (each slot change is one transaction with the counter in it: ${t.poolItemUpdatesPerJob} moved it, take and free; ${t.poolItemChecksPerJob} checked it, pass and claim; cancelled ones count too, a failed write costs a unit), ${t.waiterWritesPerJob} to waiter items, ${t.poolPartitionReadsPerJob} reads. All requests per job in this run: ${t.requestsPerJob.total} (${opsList(t.requestsPerJob.ops)}).`,
    '',
    `- **Emulator**: one counter item takes ${t.emulatorHotItemWritesPerSecond} transactions/s (${r.params.throughput.hotItemConcurrency} loops, each a take-shaped then a free-shaped TransactWriteItems as the lease store writes them: the counter's conditional Update and one item of its own, on a counter in Sluice's table, after a warm-up), so the hot item alone would allow about ${t.emulatorHotItemBoundJobsPerSecond} jobs/s. CPU during the run: bench process ${t.cpu.benchProcess} cores${t.cpu.emulatorProcess !== undefined ? `, emulator process ${t.cpu.emulatorProcess} cores` : ''}, of ${t.cpu.cores}; the bench process's event loop was busy ${pct(t.cpu.eventLoopUtilization)} of the time (timers late by up to ${t.cpu.eventLoopDelayP99Ms} ms, p99).`,
    `- **AWS**: an item takes 1,000 write units/s. A write costs one unit per KB of the item, and each item of a transaction two (a ConditionCheck is billed as a write): the counter is under 1 KB whatever the slots held, so each of its ${t.poolItemWritesPerJob} writes per job costs 2 units, ${t.awsPoolItemWriteUnitsPerJob} per job, and one pool can take about **${t.awsHotItemBoundJobsPerSecond} jobs/s** at any limit. (Before the counter design, the pool item held one entry per slot and grew about 61 bytes per holder: its writes cost 60 units each with 1,000 running, about 8 jobs/s. The measure it replaces, the bound by jobs running at once, no longer depends on them.) The capacity section below measures these units on DynamoDB Local, failed writes and the holders index included.`,
    '',
  );
  return out;
}

type CapacityRow = NonNullable<BenchResults['capacity']>['byLimit'][string];

const capacityRows = (r: BenchResults): CapacityRow[] => Object.values(r.capacity!.byLimit).sort((a, b) => a.limit - b.limit);
const n3 = (x: number) => (Math.round(x * 1000) / 1000).toString();
const lim = (x: number) => x.toLocaleString('en-US');

function capacitySection(r: BenchResults): string[] {
  const c = r.capacity!;
  const p = c.params;
  const rows = capacityRows(r);
  const out = ['## Capacity per job by limit (DynamoDB Local)', ''];
  out.push(
    `**Method.** The same workload at each limit, on the local stack with DynamoDB Local as the DynamoDB engine (it reports consumed capacity; dynalite does not), in a process of its own: max(${lim(p.minJobs)}, ${p.jobsPerSlot} x limit + ${p.extraJobs}) jobs (${rows.map((x) => `${lim(x.jobs)} at ${lim(x.limit)}`).join(', ')}), each running limit x 1000 / ${p.offeredJobsPerSecond} ms on average (${rows.map((x) => `${s1(x.runMs)} at ${lim(x.limit)}`).join(', ')}; drawn uniformly within +-50%, so the slots do not end in waves), so a full pool of any limit hands slots over at the same ${p.offeredJobsPerSecond} per second and the limits compare at the same load (runs of a few ms would hand slots over as fast as the machine allows, and at the larger limits measure how many releasers race for the same waiters at once rather than what a job costs; \`--capacity-rate\` sets the rate), parked in a paused pool through the real path (SQS, the acquirer: register, a take that finds the pool full, the waiter item, park), then the pool opened at the limit: the first \`limit\` jobs get a free slot (reserve, by the pool admin's fill), every other one a slot handed over by a finishing job (pass), then claim, start, record and their own release. Middleware the bench adds to Sluice's DynamoDB client (never product code) sets \`ReturnConsumedCapacity: INDEXES\` on every call and adds up the units of each answer; everything Sluice's functions and the pool admin consume, divided by the jobs, is the job path. The reconciler is apart (below).`,
    '',
    `DynamoDB Local reports single-item calls by DynamoDB's rules, but a transaction of several small items as if it were one (a probe: 2, 3 or 4 items under 1 KB in one TransactWriteItems are reported as 2 units; DynamoDB bills 2 per item). So each transaction is counted by DynamoDB's rule: 2 units per item (a ConditionCheck billed as a write; every item Sluice writes is under 1 KB: the largest plain write reported ${Math.max(...rows.map((x) => x.largestPlainWriteUnits))} unit), plus 2 per holders-index entry the slot change puts or deletes (what DynamoDB Local reports for one; take and reserve put one, free deletes one, pass both, claim none), and 2 for the \`ended\` index's entry of the job a pass or free ends (that write moves it to a terminal state; a plain write that ends a job is reported with its entry, 1 unit). DynamoDB Local's own figures were ${rows.map((x) => x.wcuReported).join(', ')} WCU per job. A counter item costs ${c.unitsPerCounterCheck} units checked and ${c.unitsPerCounterUpdate} updated in a transaction (measured on DynamoDB Local: a transaction with the counter alone). Failed writes (a condition that did not hold, a cancelled transaction) come back with no units: they are counted apart, with what they may cost (2 per item of a cancelled transaction, 1 per plain write: AWS bills a failed conditional write as a write; whether it bills a cancelled transaction is not documented, so this is an upper bound).`,
    '',
    table(
      [
        'Limit',
        'jobs (by hand-off)',
        'WCU per job',
        'RCU per job',
        'counter WCU',
        'hot item: jobs/s per pool on AWS',
        'pool partition WCU',
        'holders index WCU',
        'ended index WCU',
        'failed writes per job (WCU if billed)',
        'reconciler per job on AWS',
        'jobs/s here',
        'hand-off p50 here',
      ],
      rows.map((x) => [
        lim(x.limit),
        `${lim(x.jobs)} (${lim(x.admitted.handedOff)})`,
        `**${x.wcu}**`,
        `**${x.rcu}**`,
        x.counterWcu,
        `**${lim(x.hotItemJobsPerSecondAws)}** (${lim(x.hotItemJobsPerSecondAwsWithFailed)} with failed writes)`,
        `${x.partitionWcu} (${lim(x.hotPartitionJobsPerSecondAws)} jobs/s)`,
        `${x.gsiWcu} (${lim(x.hotIndexKeyJobsPerSecondAws)} jobs/s)`,
        x.endedWcu ?? 0,
        `${x.failedWrites} (${x.failedWcuEstimate})`,
        `${x.reconciler.wcuPerJobAws} WCU, ${x.reconciler.rcuPerJobAws} RCU`,
        x.jobsPerSecondLocal,
        `${x.handoff.p50Ms} ms`,
      ]),
    ),
    '',
    `- **The mix of slot changes** is what moves the totals: the first \`limit\` jobs get their slot from the pool's opening (a reserve, 6 units with its index entry) and the last \`limit\` give theirs back with no one waiting (a free, 6 units), where every other job is handed a slot and hands its own on (a pass, 10 units for both ends): ${rows.map((x) => `${pct(x.admitted.reserved / x.jobs)} of the jobs at ${lim(x.limit)}`).join(', ')} took the reserve and free path. Per slot change the units are the same at every limit.`,
    `- **Hot keys on AWS**: an item (and a partition) takes 1,000 write units per second. The pool counter takes ${rows.map((x) => x.counterWcu).join(', ')} WCU per job (a check in each pass and claim, an update in each take, reserve and free: 2 units each), so one pool can take 1,000 / counter WCU jobs per second whatever its limit; counting the failed takes of jobs arriving at a full pool (a cancelled transaction with the counter in it), ${rows.map((x) => lim(x.hotItemJobsPerSecondAwsWithFailed)).join(', ')}. The pool's partition key also holds its waiter items (put and deleted once per parked job): ${rows.map((x) => x.partitionWcu).join(', ')} WCU per job on it, unless DynamoDB splits the item collection. Every holder of a pool has the same key in the holders index (holderPool = the pool), so the index's writes for a pool land on one index key too: ${rows.map((x) => x.gsiWcu).join(', ')} WCU per job, ${rows.map((x) => lim(x.hotIndexKeyJobsPerSecondAws)).join(', ')} jobs/s (an index partition takes 1,000 WCU/s as well, and a throttled index throttles the table's writes). With 20-minute runs a full pool of 1,000 turns over under 1 job/s: these bounds bite only for short jobs.`,
    `- **Races**: slot-change transactions per job (tried, cancelled): ${rows
      .map(
        (x) =>
          `limit ${lim(x.limit)}: ${Object.entries(x.slotChanges)
            .map(([k, v]) => `${k} ${v.tried} (${v.cancelled})`)
            .join(', ')}`,
      )
      .join('; ')}. Pass transactions cancelled because another releaser had just reserved the same waiter: ${rows.map((x) => lim(x.passFailures.targetGone)).join(', ')} in all; by a conflict with another transaction: ${rows.map((x) => lim(x.slotChanges.pass?.conflicts ?? 0)).join(', ')} per job. Slot-seconds left free while jobs waited (a release whose hand-off and fill both gave up after their rounds): ${rows.map((x) => x.idleSlotSeconds).join(', ')}; the bench ran the reconciler ${rows.map((x) => x.reconciler.idleSlotHeals).join(', ')} times to fill them, as its schedule would.`,
    `- **Reconciler** (apart from the job path): ${p.reconcilerRuns} runs measured with the pool full at each limit: ${rows.map((x) => `${x.reconciler.wcuPerRun} WCU + ${x.reconciler.rcuPerRun} RCU per run over ${x.reconciler.holdersPerRun} holders`).join('; ')}. A run that finds a job's run ended before its event was handled completes it (racing its releaser), which these runs of seconds make likelier than ${p.jobMinutes}-minute runs do. Its share per job on AWS counts the checking alone: a read of each holder's record and of the index pages that list it, plus the run's reads per pool (the registry, the counters) shared by the pool's holders, ${p.jobMinutes / p.reconcilePeriodMinutes} times per ${p.jobMinutes}-minute job (every ${p.reconcilePeriodMinutes} minutes): ${rows.map((x) => `${x.reconciler.rcuPerJobAws} RCU`).join(', ')}, no writes unless something drifted. Runs the bench asked for (a stalled pool, free slots left while jobs waited): ${rows.map((x) => `${x.reconciler.healRuns} at ${lim(x.limit)}${x.reconciler.healRuns ? ` (${x.reconciler.wcuPerJobLocal} WCU + ${x.reconciler.rcuPerJobLocal} RCU per job)` : ''}`).join(', ')}. Scope check: ${rows.every((x) => x.reconciler.scopeLeaks === 0) ? 'no take or claim (the acquirer\'s alone) was counted in the reconciler\'s or the pool admin\'s scope' : `**${rows.map((x) => x.reconciler.scopeLeaks).join(', ')} takes or claims were counted in the reconciler's or the pool admin's scope: the attribution leaked**`}.`,
    `- **Here**: jobs/s are start calls between the 10th and the 90th percentile start, at the same ${p.offeredJobsPerSecond} completions per second offered at every limit: a pool that kept up delivers about that many, one whose per-job cost grew with the limit (more calls, slower calls, slots left idle) falls behind. The limits ran one after another in this order in one process (Sluice's functions, fauxqs's client side, the simulator), DynamoDB Local in its own JVM. The limit itself allows ${rows.map((x) => `${lim(x.limitBoundJobsPerSecond)} at ${lim(x.limit)}`).join(', ')} jobs/s at the hand-off latency measured (limit x 1000 / (run + hand-off p50)). Calls took p50 ${rows.map((x) => `${dynamoRange(x.callLatency, 'p50Ms')} ms at ${lim(x.limit)}`).join(', ')} for DynamoDB; the process's event loop was busy ${rows.map((x) => pct(x.process.eventLoopUtilization)).join(', ')} (load average ${r.machine.loadAverage.start.join('/')} at the start of the bench: timings here are the machine's as much as Sluice's).`,
    '',
  );
  const first = rows[0]!;
  const last = rows[rows.length - 1]!;
  const labels = [...new Set(rows.flatMap((x) => Object.keys(x.byCall)))].sort();
  out.push(
    `Where the units go, per job (calls, of them failed; WCU; RCU), at limit ${lim(first.limit)}${last !== first ? ` and ${lim(last.limit)}` : ''}:`,
    '',
    table(
      ['Call', ...(last !== first ? [first, last] : [first]).map((x) => `limit ${lim(x.limit)}`)],
      labels.map((label) => [
        label,
        ...(last !== first ? [first, last] : [first]).map((x) => {
          const cell = x.byCall[label];
          return cell ? `${cell.calls}${cell.failed ? ` (${cell.failed} failed)` : ''}; ${cell.wcu} / ${cell.rcu}` : '-';
        }),
      ]),
      last !== first ? 'lll' : 'll',
    ),
    '',
  );
  return out;
}

/** The calls whose units per job grew the most from the smallest limit to the largest. */
function growth(first: CapacityRow, last: CapacityRow, key: 'wcu' | 'rcu'): string {
  const labels = new Set([...Object.keys(first.byCall), ...Object.keys(last.byCall)]);
  return [...labels]
    .map((label) => ({ label, d: (last.byCall[label]?.[key] ?? 0) - (first.byCall[label]?.[key] ?? 0) }))
    .filter((x) => Math.abs(x.d) >= 0.05)
    .sort((a, b) => b.d - a.d)
    .slice(0, 5)
    .map((x) => `${x.label} ${x.d > 0 ? '+' : ''}${n3(x.d)}`)
    .join(', ');
}

function capacityFlatnessBound(r: BenchResults): string[] {
  const rows = capacityRows(r);
  const first = rows[0]!;
  const last = rows[rows.length - 1]!;
  return [
    `Per job, WCU ${rows.map((x) => `${x.wcu} at ${lim(x.limit)}`).join(', ')}; RCU ${rows.map((x) => `${x.rcu} at ${lim(x.limit)}`).join(', ')}. No write Sluice makes grows with the limit: the counter is ${r.throughput ? `${r.throughput.maxPoolItemBytes} bytes` : 'a few dozen bytes'} whatever the slots held, each slot change is one transaction of the same items. What grows is how often releasers race for the same waiter: from limit ${lim(first.limit)} to ${lim(last.limit)}, WCU by call: ${growth(first, last, 'wcu') || 'none'}; RCU by call: ${growth(first, last, 'rcu') || 'none'}. A releaser reads the two oldest waiters and passes its slot to the first; the waiter stays listed until its wake-up is sent and its item deleted, so every releaser that ends meanwhile tries the same waiters first, and each lost race costs a cancelled transaction (units only if AWS bills it: failed writes ${rows.map((x) => x.failedWrites).join(', ')} per job), a read of the waiting job's record, and, past the two it read, another query. The more slots, the more releasers at once, the longer that walk (here each call takes tens of ms, which widens the window).`,
    '',
    'What would flatten it:',
    '',
    "- Delete the waiter item in the pass itself (a fourth item of the transaction, 2 WCU, against the DeleteItem after the send, 1): a waiter let in is gone from the next query at once, so releasers stop meeting it; the wake-up goes out after the commit, and the reconciler re-sends a reservation whose wake-up was lost, as now.",
    '- Or spread releasers over the oldest waiters (each tries the k-th oldest for a k of its own, falling back to the oldest) instead of all starting at the first.',
    "- Skip the read of the waiting job's record after a lost race: the cancelled transaction already says its Update failed.",
  ];
}

function writeUnitsBound(r: BenchResults): string[] {
  const rows = capacityRows(r);
  const first = rows[0]!;
  const wcuOf = (label: string) => first.byCall[label]?.wcu ?? 0;
  const parts = Object.entries(first.byCall)
    .filter(([, c]) => c.wcu > 0)
    .sort((a, b) => b[1].wcu - a[1].wcu)
    .map(([label, c]) => `${label} ${c.wcu}`)
    .join(', ');
  const pass = wcuOf('TransactWriteItems pass');
  const claim = wcuOf('TransactWriteItems claim');
  return [
    `Even at limit ${lim(first.limit)}, with the fewest races, a job costs ${first.wcu} WCU: ${parts}. Transactions cost 2 units per item, and the slot lives on the job's record, so a hand-off writes three items and two index entries (${n3(pass)} per job for the pass, which also moves the woken job to starting), and the claim of a reservation (a slot the pool admin or the reconciler filled: the releaser's own fills start the job with no claim) two items (${n3(claim)}). The plain writes are one unit each: register the job, park it, its waiter put and deleted, record the run and mark the job running. The failed take of every job that arrives at a full pool would add ${first.failedWcuEstimate} if AWS bills cancelled transactions.`,
    '',
    'What would bring it to 15 or under, each with what it would save per job:',
    '',
    `- The counter's ConditionChecks, in every pass and in the claim of a filled reservation, are what make a lowered limit hold at once (docs/protocol.md: both check \`inUse <= limit\`); they cost 2 units each, and they are why a claim is a transaction at all (its job update 2 units instead of 1). Lowering a limit is rare: keeping that guarantee without touching the counter on every hand-off (for instance a flag on the pool read with the job's record, set while the pool is over its limit) would make the claim a plain conditional update (1 unit instead of ${n3(claim / Math.max(0.001, first.byCall['TransactWriteItems claim']?.calls ?? 1))}) and the pass two items instead of three (2 units less per hand-off).`,
    `- The holders index: ${first.gsiWcu} units per job, 2 per entry a transaction puts or deletes, as DynamoDB Local reports it. If AWS bills an index entry written by a transaction at the plain rate (1 unit; not documented either way), half of that.`,
    `- A job that arrives at a full pool first tries a take, which is cancelled (up to ${first.failedWcuEstimate} units per job with the other failed writes, if AWS bills them). Reading the counter first (1 read unit) would let it park without the cancelled transaction.`,
  ];
}

function capacityThroughputBound(r: BenchResults): string[] {
  const rows = capacityRows(r);
  const first = rows[0]!;
  const last = rows[rows.length - 1]!;
  const cpuPerJob = (x: CapacityRow) => (x.jobsPerSecondLocal > 0 ? Math.round(((x.process.cpuCores * 1000) / x.jobsPerSecondLocal) * 10) / 10 : 0);
  return [
    `Limit ${lim(last.limit)}: ${last.jobsPerSecondLocal} jobs/s, limit ${lim(first.limit)}: ${first.jobsPerSecondLocal} jobs/s. Requests per job: ${last.requestsPerJob.total} against ${first.requestsPerJob.total}; CPU of the process ${cpuPerJob(last)} against ${cpuPerJob(first)} ms per job; DynamoDB calls p50 ${dynamoRange(last.callLatency, 'p50Ms')} against ${dynamoRange(first.callLatency, 'p50Ms')} ms. The extra requests are the races of the capacity goal above (pass ${last.slotChanges.pass?.tried ?? 0} tried per job against ${first.slotChanges.pass?.tried ?? 0}), and slots left free while jobs waited (${last.idleSlotSeconds} slot-seconds against ${first.idleSlotSeconds}) until a reconciler run filled them. Removing the races (see above) removes both.`,
  ];
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
    `From the requests per job at backlog ${Number(c.fromBacklog).toLocaleString('en-US')} (${per.sqs} SQS + ${a.producerSqsPerJob} for the producer's batched send, ${per.dynamodbWrites} DynamoDB writes costing ${per.dynamodbWriteUnits} write units, ${per.dynamodbReads} reads, ${per.lambda} invocations) and the reconciler for ${a.jobMinutes}-minute jobs. Prices: ${pr.dated}: SQS $${pr.sqsPerMillionRequests}/M requests; Lambda $${pr.lambdaPerMillionRequests}/M requests and $${pr.lambdaArmPerGbSecond}/GB-s (arm64); DynamoDB on demand $${pr.dynamodbPerMillionWriteUnits}/M write units, $${pr.dynamodbPerMillionReadUnits}/M read units; AWS service events on the default bus free.`,
    '',
    table(
      ['Item', 'per million jobs'],
      [
        ['SQS requests', usd(b.sqs)],
        ['Lambda requests', usd(b.lambdaRequests)],
        [`Lambda duration (${a.invocationMs} ms billed per invocation, ${a.memoryMb} MB)`, usd(b.lambdaDuration)],
        [
          `DynamoDB writes (${per.dynamodbWriteUnits} write units per job: ${a.unitsPerWrite} per plain write, 2 per item of a transaction, cancelled ones included, and per holders-index entry it writes; the ended index's entry of each job, at the rate of the write that files it)`,
          usd(b.dynamodbWrites),
        ],
        [`DynamoDB reads (${a.unitsPerRead} unit each, strongly consistent)`, usd(b.dynamodbReads)],
        [`Reconciler (${a.jobMinutes}-minute jobs, every ${a.reconcilePeriodMinutes} min, pool of ${a.limit})`, usd(b.reconciler)],
        [`EventBridge (AWS service events free; Sluice's own events, ${per.events} a job, $${pr.eventBridgeCustomPerMillionEvents}/M)`, usd(b.eventBridge)],
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
  // Issue 23's first, in its table's order; a row met in part (status) has its bound too.
  const missed = r.goals.filter((g) => !g.met);
  const out = ['## What bounds the missed goals, and what would lift them', ''];
  if (missed.length === 0) {
    out.push('Every goal was met in this run.', '');
    return out;
  }
  for (const g of missed) {
    out.push(`### ${g.goal}: ${g.measured} (target ${g.target})`, '');
    if (g.id === 'race-lost' && r.race) out.push(...raceLostBound(r));
    else if (g.id === 'race-p99' && r.race) out.push(...raceP99Bound(r));
    else if (g.id === 'rate-burst' && r.rateLimit) out.push(...rateBurstBound(r));
    else if (g.id === 'weights' && r.weights) out.push(...weightsBound(r));
    else if (g.id === 'hotspot' && r.hotspot) out.push(...hotspotBound(r));
    else if (g.id === 'requests' && r.requestsPerJob) out.push(...requestsBound(r));
    else if (g.id === 'cost' && r.cost) out.push(...costBound(r));
    else if (g.goal.startsWith('hand-off p50') && r.handoff) out.push(...handoffP50Bound(r));
    else if (g.goal.startsWith('hand-off p99') && r.handoff) out.push(...handoffP99Bound(r));
    else if (g.goal.startsWith('burst') && r.burst) out.push(...burstBound(r));
    else if (g.goal.startsWith('efficiency') && r.schedulers) out.push(...efficiencyBound(r));
    else if (g.goal.startsWith('requests') && r.requestsPerJob) out.push(...flatnessBound(r));
    else if (g.goal.startsWith('throughput') && r.throughput) out.push(...throughputBound(r));
    else if (g.goal.startsWith('capacity per job') && r.capacity) out.push(...capacityFlatnessBound(r));
    else if (g.goal.startsWith('write units per job') && r.capacity) out.push(...writeUnitsBound(r));
    else if (g.goal.startsWith('jobs/s through one pool') && r.capacity) out.push(...capacityThroughputBound(r));
    out.push('');
  }
  return out;
}

type ProfileRows = NonNullable<BenchResults['handoff']>['detail']['profile']['rows'];

/** The calls on the traced path, grouped in steps: calls of one phase that start together (within 1 ms, before the first ends) run side by side. */
function pathSteps(rows: ProfileRows): ProfileRows[] {
  const onPath = rows.filter((x) => x.onPath && x.ms > 0);
  const steps: ProfileRows[] = [];
  for (const row of onPath) {
    const first = steps[steps.length - 1]?.[0];
    if (first && first.phase === row.phase && row.atMs - first.atMs <= 1 && row.atMs < first.atMs + first.ms) steps[steps.length - 1]!.push(row);
    else steps.push([row]);
  }
  return steps;
}

/** "a-b" ms over the DynamoDB item calls of a latency table, for one statistic. */
function dynamoRange(latency: Record<string, { n: number; p50Ms: number; p99Ms: number }>, stat: 'p50Ms' | 'p99Ms'): string {
  const values = ['GetItem', 'Query', 'UpdateItem', 'TransactWriteItems']
    .map((op) => latency[`dynamodb.${op}`])
    .filter((v): v is { n: number; p50Ms: number; p99Ms: number } => !!v && v.n >= 20)
    .map((v) => v[stat]);
  if (values.length === 0) return '?';
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return lo === hi ? `${lo}` : `${lo}-${hi}`;
}

function handoffP50Bound(r: BenchResults): string[] {
  const d = r.handoff!.detail;
  const steps = pathSteps(d.profile.rows);
  const calls = steps.reduce((n, step) => n + step.length, 0);
  const stepMs = Math.round(steps.reduce((sum, step) => sum + Math.max(...step.map((x) => x.ms)), 0));
  const describe = (step: ProfileRows) =>
    step.length === 1
      ? `${step[0]!.phase} ${step[0]!.call} ${step[0]!.ms} ms`
      : `${step[0]!.phase} [${step.map((x) => `${x.call} ${x.ms} ms`).join(' | ')}]`;
  const traced = d.profile.rows.filter((x) => x.onPath && x.call.startsWith('dynamodb.')).map((x) => x.ms);
  const tracedRange = traced.length ? `${Math.min(...traced)}-${Math.max(...traced)}` : '?';
  const send = d.profile.rows.find((x) => x.phase === 'releaser' && x.call === 'sqs.SendMessage');
  const start = d.profile.rows.find((x) => x.phase === 'simulator');
  const acquirerSteps = steps.filter((step) => step[0]!.phase === 'acquirer').length;
  const p = d.process;
  return [
    `With nothing else running a hand-off takes ${d.profile.totalP50Ms} ms: ${calls} calls in ${steps.length} steps one after another, ${stepMs} ms of them (${steps.map(describe).join(' -> ')}; [a | b] run side by side). The path is as long as its round trips: each local call costs a few ms (an HTTP round trip to an emulator and the SDK's work; ${tracedRange} ms for the DynamoDB calls here). Under load (${Math.round((d.n / d.makespanMs) * 1000)} hand-offs/s, DynamoDB calls p50 ${dynamoRange(d.callLatency, 'p50Ms')} ms) the p50 is ${r.handoff!.p50Ms} ms${r.handoff!.p50Ms > d.profile.totalP50Ms ? `, ${round1(r.handoff!.p50Ms - d.profile.totalP50Ms)} ms more than alone: calls queue in the bench process's event loop (busy ${pct(p.eventLoopUtilization)} of the time; it runs all of Sluice's functions, the simulator and the bus) and in the emulators' one process${p.emulatorCpuCores !== undefined ? ` (${p.emulatorCpuCores} cores)` : ''}` : ''}. What would lift it, in calls taken off the path:`,
    '',
    d.oneHop > 0
      ? `- The releaser starts the woken job itself (one hop, ${d.oneHop} of ${d.n} hand-offs), so no SQS hop is on the path, and its pass moves the woken job straight to \`starting\` (the claim's patch in the pass's own transaction: no claim follows). It still reads that job's record after the pass, for its version and fields: carrying them on the waiter item (fenced by the version) would take that step off too.`
      : `- The releaser sends the woken job through SQS, and the acquirer then reads and writes again before it starts the run. With \`handOffStart: releaser\` (the default) the releaser starts the run itself${send && start ? `: ${round1(start.atMs - send.atMs)} of the ${d.profile.totalP50Ms} ms would leave the path` : ''}.`,
    "- The releaser's first call looks up the run record to find the job and its pool, and everything else waits for it. Nothing in the AppFlow or Glue event names the job, so this read has to stay.",
  ];
}

function handoffP99Bound(r: BenchResults): string[] {
  const d = r.handoff!.detail;
  const seg = d.segments;
  const worst = (Object.entries(seg) as Array<[string, { p99Ms: number; p50Ms: number }]>).sort((a, b) => b[1].p99Ms - a[1].p99Ms)[0]!;
  const label: Record<string, string> = {
    bus: 'bus to releaser',
    releaserStart: 'releaser to its own start call',
    releaser: 'releaser to wake-up',
    queue: 'SQS hop',
    acquirer: 'acquirer to start call',
  };
  const races = Object.entries(d.lostRaces)
    .filter(([k]) => k !== '0')
    .sort(([a], [b]) => Number(a) - Number(b))
    .map(([k, n]) => `${n} lost ${k === '1' ? 'one race' : `${k} races`}`)
    .join(', ');
  const p = d.process;
  const racesBound = d.firstTry.p99Ms <= 100;
  return [
    `The tail is in "${label[worst[0]] ?? worst[0]}" (p99 ${worst[1].p99Ms} ms against p50 ${worst[1].p50Ms} ms). ${d.afterLostRace.n} of ${d.n} hand-offs (${pct(d.afterLostRace.n / Math.max(1, d.n))}) came from a releaser whose first pass lost a race${races ? ` (${races})` : ''}: two runs ending close together make two releasers read the same oldest waiter (the query runs in parallel with the read of the job's record, before the slot is passed; the pass that lets a waiter in deletes its item in the same transaction, but a list read just before still names it). The loser does not send that waiter again (${d.wakeUpsPerHandoff.toFixed(2)} wake-ups per hand-off), but before its slot moves it pays up to three calls more, one after another: the cancelled transaction (whose cancellation reasons carry the waiting job's record as it was, ALL_OLD, so no read is needed to tell a job let in by another releaser from a waiter item a crash left behind, then deleted), a new read of the list (the first is as old as the race it lost), and, when it spreads, a new ticket taken after that read. From its first pass to the one that went through, such a releaser spent p50 ${d.transferPhase.afterLostRace.p50Ms} ms, p99 ${d.transferPhase.afterLostRace.p99Ms} ms, against p50 ${d.transferPhase.firstTry.p50Ms} ms, p99 ${d.transferPhase.firstTry.p99Ms} ms for a single transaction. Those hand-offs: p50 ${d.afterLostRace.p50Ms} ms, p99 ${d.afterLostRace.p99Ms} ms; the others: p50 ${d.firstTry.p50Ms} ms, p99 ${d.firstTry.p99Ms} ms.`,
    '',
    `${racesBound ? 'Without the races the p99 would be within the goal; with about one hand-off in ' + Math.max(1, Math.round(d.n / Math.max(1, d.afterLostRace.n))) + ' losing a race, they set the p99.' : `Even without a race the p99 is ${d.firstTry.p99Ms} ms: each call's own tail under bursts adds up over the path.`} During the load run DynamoDB calls took p50 ${dynamoRange(d.callLatency, 'p50Ms')} ms but p99 ${dynamoRange(d.callLatency, 'p99Ms')} ms: a burst of completions queues in the emulators' one process${p.emulatorCpuCores !== undefined ? ` (${p.emulatorCpuCores} cores on average)` : ''} and in the bench process's event loop (busy ${pct(p.eventLoopUtilization)}, timers late by ${p.eventLoopDelayP99Ms} ms at p99). What would lift it:`,
    '',
    "- Fewer lost races: releasers spread only once a release of the limit has lost a race in the last minute (their own, or another environment's, told by the list's race mark), so the first overlap after a quiet minute still costs one.",
    '- Fewer calls on the path at all (see the p50): every call adds its own tail.',
  ];
}

function efficiencyBound(r: BenchResults): string[] {
  const s = r.schedulers!.sluice;
  return [
    `Sluice's makespan is ${s1(s.makespanMs)} against ${s1(s.idealMakespanMs)} for the ideal schedule: ${s1(s.makespanMs - s.idealMakespanMs)} lost over ${s.jobs} jobs, the hand-off latency times the number of hand-offs on the critical path.`,
  ];
}

function flatnessBound(r: BenchResults): string[] {
  const rows = Object.values(r.requestsPerJob!).sort((a, b) => a.backlog - b.backlog);
  return [
    `Totals by backlog: ${rows.map((x) => `${x.backlog}: ${x.total}`).join(', ')}. Compare the per-operation counts in results.json: the operations that differ are the ones to look at.`,
  ];
}

/** Issue 13's 12 requests per job: where the job path's requests go, and which could go. */
function requestsBound(r: BenchResults): string[] {
  const rows = Object.values(r.requestsPerJob!).sort((a, b) => a.backlog - b.backlog);
  const x = rows[rows.length - 1]!;
  const ops = Object.entries(x.ops)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([op, n]) => `${op} ${n}`)
    .join(', ');
  return [
    `Per job at backlog ${x.backlog.toLocaleString('en-US')}: ${ops}. A job's life: its arrival (a share of a receive and a delete, the park that registers it, a look at the counter after parking; a first delivery for a pool its acquirer saw full within the last second does not try a take first), its hand-off (the releaser's run reference read, the finished job's read with the waiters query beside it, the pass, which moves the woken job straight to starting, and the woken job's read), its start and the running write and run reference, Sluice's own event of the job's end put on the bus (PutEvents: ${x.events} a job), and two invocations.`,
    '',
    "What would take requests off, each one per job: the woken job's read after the pass (its record's fields carried on its waiter item, fenced by its version), one; the run reference and the running write in one transaction, one (but a transaction bills 2 units per item: more dollars); no run lookup where the completion event names the job (Step Functions, ECS and Batch can carry the job id; AppFlow and Glue, the bench's kinds, cannot), one; the acquirer's look at the counter after parking, made a ConditionCheck in the park's transaction (2 write units instead of a read), one. 12 needs all four, two of them costing more dollars.",
  ];
}

/** Issue 23's $10 per million: where the dollars go. */
function costBound(r: BenchResults): string[] {
  const b = r.cost!.breakdown;
  const per = r.requestsPerJob![r.cost!.fromBacklog]!;
  const rest = b.total - b.dynamodbWrites;
  const target = 10;
  const unitPrice = r.cost!.prices.dynamodbPerMillionWriteUnits;
  const unitsAllowed = Math.floor(((target - rest) / unitPrice) * 10) / 10;
  return [
    `DynamoDB writes are ${usd(b.dynamodbWrites)} of ${usd(b.total)}: ${per.dynamodbWriteUnits} write units per job, because every slot change is a transaction (2 units per item, the job's record and each counter), the pass writes three items, the holders index two entries and the ended index one (the finished job's, filed by the same transaction). The reconciler is ${usd(b.reconciler)}, SQS ${usd(b.sqs)}, Lambda ${usd(b.lambdaRequests + b.lambdaDuration)}, DynamoDB reads ${usd(b.dynamodbReads)}: ${usd(rest)} without the writes. ${rest >= target ? `That alone is over $${target}: the goal needs fewer SQS requests and invocations per job and a cheaper reconciler, as well as fewer write units.` : `$${target} needs the writes under ${usd(target - rest)}, ${unitsAllowed} write units a job: ${Math.round((per.dynamodbWriteUnits - unitsAllowed) * 10) / 10} fewer than now. The capacity section lists where the units go and what would take them off (the counter's checks in every pass and claim, the holders index entries written by transactions).`}`,
  ];
}

function throughputBound(r: BenchResults): string[] {
  const t = r.throughput!;
  const cpuMsPerJob = t.jobsPerSecond > 0 ? Math.round(((t.cpu.benchProcess * 1000) / t.jobsPerSecond) * 10) / 10 : 0;
  const hotIsBound = t.emulatorHotItemBoundJobsPerSecond <= t.jobsPerSecond * 1.5;
  const loopSaturated = t.cpu.eventLoopUtilization >= 0.9;
  const hot = `the emulator's pool counter takes ${t.emulatorHotItemWritesPerSecond} transactions/s, room for about ${t.emulatorHotItemBoundJobsPerSecond} jobs/s at ${t.poolItemWritesPerJob} counter writes per job`;
  const emulators = t.cpu.emulatorProcess !== undefined ? `; the emulators' process used ${t.cpu.emulatorProcess} cores` : '';
  return [
    hotIsBound
      ? `The emulator's hot item is the bound here: one counter takes ${t.emulatorHotItemWritesPerSecond} transactions/s, about ${t.emulatorHotItemBoundJobsPerSecond} jobs/s at ${t.poolItemWritesPerJob} counter writes per job.`
      : loopSaturated
        ? `Not the hot item: ${hot}. The bound is the bench process's main thread: its event loop was busy ${pct(t.cpu.eventLoopUtilization)} of the run (timers ran late by ${t.cpu.eventLoopDelayP99Ms} ms at p99), and the process used ${t.cpu.benchProcess} cores of CPU in all (the main thread plus the GC's and libuv's helper threads): about ${cpuMsPerJob} ms of CPU per job, for ${t.requestsPerJob.total} requests. Sluice's three functions, the SDK clients, the AppFlow/Glue simulator, the event bus and the event source share that one event loop${emulators}, of ${t.cpu.cores}.`
        : `Neither the hot item (${hot}) nor the bench process's event loop (busy ${pct(t.cpu.eventLoopUtilization)} of the run, ${t.cpu.benchProcess} cores in all) is saturated${emulators}, of ${t.cpu.cores}: the jobs in flight (${r.params.pollers} event-source pollers, batches of 10) times the latency of each job's calls set the rate.`,
    '',
    ...threadsRun(r, t),
  ];
}

/** CPU per job, all processes counted (Sluice's functions and the harness, and the emulators when apart), ms. */
function allCpuMsPerJob(t: ThroughputResult): number {
  const cores = t.cpu.benchProcess + (t.cpu.emulatorProcess ?? 0);
  return t.jobsPerSecond > 0 ? Math.round(((cores * 1000) / t.jobsPerSecond) * 10) / 10 : 0;
}

/** The throughput run with the functions in worker threads, beside the runs in one thread: what bounds both. */
function threadsRun(r: BenchResults, t: ThroughputResult): string[] {
  const w = r.throughputThreads;
  const aws = `On AWS the pool counter is the bound, at the rate given above (${t.awsHotItemBoundJobsPerSecond} jobs/s per pool); the capacity section has it measured, with the other hot keys.`;
  if (!w)
    return [
      `What would lift it: more cores, and fewer requests per job (the CPU per job falls with them). The functions in worker threads (\`--throughput-threads 2\`, not run by default) were slower on this 2-core machine when last measured (119 against 145 jobs/s: each thread has its own SDK clients, and every call crosses to the main thread to be counted). ${aws}`,
    ];
  const one = allCpuMsPerJob(t);
  const threaded = allCpuMsPerJob(w);
  const cores = t.cpu.cores;
  const best = Math.min(one, threaded);
  return [
    '',
    `**With the functions in worker threads** (\`npm run bench -- --function-workers N\`; here ${w.threadsPerFunction} threads for each function with an event source, each bundled by esbuild as it is deployed; the same ${w.jobs.toLocaleString('en-US')} jobs on a stack of its own, one run): **${w.jobsPerSecond} jobs/s**, against ${t.jobsPerSecond} in one thread. The bench's main thread then carried only the simulator, the bus and the pollers (its event loop busy ${pct(w.cpu.eventLoopUtilization)}), and the process used ${w.cpu.benchProcess} cores${w.cpu.emulatorProcess !== undefined ? `, the emulators ${w.cpu.emulatorProcess}` : ''}, of ${cores}.`,
    '',
    `**What bounds it is CPU per job**, not the one event loop: counting every process (the functions and their SDK clients, the harness, the emulators), a job took ${one} ms of CPU in one thread and ${threaded} ms in threads (each thread has its own clients and connections, and every call crosses to the main thread for the count). At ${best} ms a job, ${cores} cores allow at most ${Math.floor((cores * 1000) / best)} jobs/s however the work is spread; 300 jobs/s would need ${Math.round((cores * 1000) / 300 * 10) / 10} ms a job on ${cores} cores, or about ${Math.ceil((300 * best) / 1000)} cores at this cost. Threads use more cores where there are more (the default bench keeps the functions in one thread, whose figures are the ones compared across sessions). Fewer requests per job lower the CPU per job in the same measure. ${aws}`,
  ];
}

function flowControlSection(r: BenchResults): string[] {
  const out = ['## Flow control: fair turns, start rates and weights', ''];
  const f = r.fairness;
  if (f)
    out.push(
      `**Fairness.** One tenant sends ${f.bigJobs.toLocaleString('en-US')} jobs to a pool of ${f.limit}; once they wait, another sends ${f.smallJobs}. ` +
        `The small tenant's last job started ${f.smallTenantLastStartHandOffs} starts after it arrived (bound: ceil(${f.smallJobs} / its share of 1/2) = ${f.boundHandOffs}), ` +
        `while ${f.bigJobsStillWaiting.toLocaleString('en-US')} of the big tenant's jobs still waited; its jobs started ${f.smallInOrder ? 'in the order it sent them' : 'in the order they reached Sluice, not quite the order it sent them (a standard SQS queue does not keep the order of sends; first in, first out holds from arrival)'}. ` +
        'Starts counted from the simulator: each one is a hand-off, the pool being full.',
      '',
    );
  const w = r.weights;
  if (w) {
    const round = (x: WeightsRound) =>
      `${(x.unitUtilization * 100).toFixed(1)}% of the budget used, the heaviest jobs waiting ${(x.heaviestMeanWaitMs / 1000).toFixed(1)} s on average (longest ${(x.heaviestLongestWaitMs / 1000).toFixed(1)} s), all done in ${(x.makespanMs / 1000).toFixed(1)} s`;
    out.push(
      `**Weights.** ${w.jobs} jobs of weights ${w.weights.join(', ')} (drawn evenly) on a budget of ${w.budget} units, all sent at once, twice. ` +
        `Without run limits (strict order: a heavy job at the head is not overtaken, units idle until enough are free for it): ${round(w.strictOrder)}. ` +
        `Each declaring \`runSeconds\` of ${w.runLimitFactor} times its run time (backfill: a job behind the head starts when it ends before the head could start anyway): ${round(w.backfill)}. ` +
        `At most ${Math.max(w.strictOrder.maxUnitsInUse, w.backfill.maxUnitsInUse)} units in progress at any moment (the simulator's record). ` +
        'Utilization is time-weighted, from the first start to the last; on runs of a few hundred ms, the time between a run\'s end and the next start (its completion event, the hand-over, the start call) is much of what is missing from 100%' +
          (w.backfill.model && w.strictOrder.model
            ? ` (the same jobs through the admission rule alone, with no such time: ${pct(w.backfill.model.noGap)} with backfill, ${pct(w.strictOrder.model.noGap)} in strict order${weightsGoalMet(w) ? '' : '; see what bounds the goal below'}).`
            : '.'),
      '',
    );
  }
  const q = r.rateLimit;
  if (q)
    out.push(
      `**Start rate.** ${q.jobs} jobs sent at once to a pool of ${q.limit} with a start rate of ${q.startsPerSecond}/s: at most ${q.maxStartsInAnySecond} start calls in any 1 s window (the simulator's record, windows anchored at each start), the closest two ${q.minGapMs} ms apart, ${(q.rateUtilization * 100).toFixed(1)}% of the rate used from the first start to the last (${(q.startsOfAllowed * 100).toFixed(1)}% of the starts it allows), ${q.failedWritesPerStart} refused writes to the limit's counter per start. ` +
        'Starts are booked an interval apart on the limit and made at their booked time (within 100 ms, else booked again); they are booked 4% further apart than the rate (520 ms at 2/s) for the start calls\' own latency, which reaches the simulator tens of ms off its booked time and, on this loaded process, up to about 130 ms: the window count above is that jitter.',
      '',
    );
  const bursts = r.rateBursts ?? [];
  if (q && bursts.length > 0)
    out.push(
      `**Start rates under a burst.** Every job of a rated pool sent at once, the burst above and bigger ones, each on a pool of its own (${r.params.rateLimit.burstLimit} slots for the bigger ones: slots to spare). The starts made over the starts the rate allows from the first start call to the last (rate x span + 1), and the writes to the limit's counter refused per start (a booking that lost the race for the \`tat\` it read, a tick election already made, a transaction conflict). An instance's bookings of one limit go one at a time, each on the \`tat\` the one before it wrote (docs/protocol.md, "Start rates"); the bench's functions share one instance, as the messages of one batch do in an acquirer environment. \`bench/rateMain.ts\` compares this against every admission booking at once, several runs each.`,
      '',
      table(
        ['rate/s', 'jobs', 'starts of those the rate allows', 'refused counter writes per start', 'counter writes per start', 'most starts in any 1 s'],
        [q, ...bursts].map((b) => [b.startsPerSecond, b.jobs, `**${pct(b.startsOfAllowed)}**`, `**${b.failedWritesPerStart}**`, b.counterWritesPerStart, b.maxStartsInAnySecond]),
      ),
      '',
    );
  return out;
}

function burstSection(r: BenchResults): string[] {
  const b = r.burst!.detail;
  const seg = b.handoffs.segments;
  return [
    '## Hand-off under a burst',
    '',
    `${b.jobs.toLocaleString('en-US')} jobs sent at once to a pool of ${b.limit}, runs of ${b.runMinMs}-${b.runMaxMs} ms: the acquirer took every message in ${s1(b.arrivingMs)} after the first start, while the pool handed slots on. Hand-offs whose completion came while the burst was arriving (exact pairing, as above): **p50 ${b.handoffP50Ms} ms, p99 ${b.handoffP99Ms} ms**, max ${b.handoffs.maxMs} ms over ${b.handoffs.n} (${b.handoffs.oneHop} started by the releaser itself); after it (${s1(b.windowMs)} window in all): p50 ${b.handoffsAfter.p50Ms} ms, p99 ${b.handoffsAfter.p99Ms} ms over ${b.handoffsAfter.n}. Segments while arriving: bus p50 ${seg.bus.p50Ms} / p99 ${seg.bus.p99Ms} ms; releaser to its own start call p50 ${seg.releaserStart.p50Ms} / p99 ${seg.releaserStart.p99Ms} ms${seg.queue.n > 0 ? `; SQS hop (wake-ups by the queue) p50 ${seg.queue.p50Ms} / p99 ${seg.queue.p99Ms} ms` : ''}.`,
    '',
    `**Shortfall** (runs in progress below the limit while jobs waited, time-weighted from the pool first full to the window's end): ${b.shortfallSlotSeconds} slot-seconds, ${(b.shortfallShare * 100).toFixed(1)}% of the window's ${Math.round((b.windowMs * b.limit) / 1000)} slot-seconds; fewest runs in progress at any moment: ${b.minInProgress}. Each hand-off leaves its slot idle for its own latency, so about (hand-offs x mean latency) of it is the hand-off itself. Then the pool was paused (limit 0) and the ${(b.jobs - b.started).toLocaleString('en-US')} jobs left wait in the table.`,
    '',
  ];
}

function burstBound(r: BenchResults): string[] {
  const b = r.burst!.detail;
  return [
    `While ${b.jobs.toLocaleString('en-US')} messages arrive, the acquirer's invocations (each parking a job: a register, a failed take, a waiter put and the park) share the emulators and the bench process with the releasers: every call on the hand-off path queues behind them. Segments while arriving: bus p99 ${b.handoffs.segments.bus.p99Ms} ms, releaser to its own start call p99 ${b.handoffs.segments.releaserStart.p99Ms} ms. On AWS the acquirer's concurrency (acquirerMaxConcurrency) bounds how much of the table's throughput arrivals take; locally one process runs everything.`,
  ];
}

/** "median of 3 runs: p50 26, 24, 30 ms; p99 81, 90, 77 ms" (or "one run"). */
function runsText(spread: Record<string, { values: number[] }>): string {
  const entries = Object.entries(spread);
  const n = entries[0]?.[1].values.length ?? 1;
  if (n <= 1) return 'one run';
  return `median of ${n} runs: ${entries.map(([name, x]) => `${name.replace(/Ms$/, '')} ${x.values.join(', ')} ms`).join('; ')}`;
}

function scheduleSection(r: BenchResults): string[] {
  const s = r.schedule!;
  const d = s.detail;
  const n = (x: number) => x.toLocaleString('en-US');
  return [
    '## Jobs that start at a time (notBefore)',
    '',
    `On a stack of its own with ${d.pollers} pollers of the job queue (the acquirer holds its batch up to a second for the sub-second rest of a delay; Lambda runs many batches at once, the local poller one per poller), a free pool (limit 10,000), runs of ${r.params.schedule.runMs} ms. Lateness is the simulator's start call minus \`notBefore\`.`,
    '',
    '| run | jobs | lateness p50 | p99 | max | started late by more than 1 s | started early |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    `| spread evenly over ${d.spread.overMs / 1000} s (sent ${Math.max(r.params.schedule.leadMs, d.spread.jobs * 6) / 1000} s before the first is due; all registered within ${n(d.spread.registeredInMs)} ms) | ${n(d.spread.n)} | **${d.spread.p50Ms} ms** | ${d.spread.p99Ms} ms | **${d.spread.maxMs} ms** | ${d.spread.startedLate1s} | ${d.spread.startedEarly} |`,
    ...(d.hotspot
      ? [
          `| due in the same second (registered within ${n(d.hotspot.registeredInMs)} ms) | ${n(d.hotspot.n)} of ${n(d.hotspot.jobs)} started | ${d.hotspot.p50Ms} ms | **${d.hotspot.p99Ms} ms** | ${d.hotspot.maxMs} ms | ${d.hotspot.startedLate1s} | ${d.hotspot.startedEarly} |`,
        ]
      : []),
    '',
    ...(d.hotspot ? [] : ['Many jobs due in the same second: the next section, on a limited and an unlimited pool.', '']),
    `Held meanwhile: ${n(d.held.jobs)} scheduled jobs due a day ahead and more, on the due index (written by the bench as the acquirer's \`schedule\` step writes them, in ${n(d.held.writeMs)} ms). They cost no request while they wait; a reconciler run with them there took ${n(d.held.reconcilerRunMs)} ms (the loader reads only the buckets from its cursor to 15 minutes ahead: ${d.held.loader?.buckets ?? '?'} bucket queries; the first run ever, with no cursor, ${n(d.held.firstReconcilerRunMs)} ms), and the runs above were measured with them held.`,
    '',
    'What bounds it:',
    '',
    "- Locally: a delay is whole seconds, so a job arrives up to a second early and the acquirer sleeps the rest; the lateness is then the acquirer's path (a consistent read, the take transaction, the start call) plus the emulator's delay precision and the poll. The spread's tail is the bench process itself (every function, the simulator, the bus and the pollers share its event loop) and the emulators sharing 2 cores. In the hotspot every job lands in the same second on one pool counter: takes meet each other's transactions (a conflict is retried after a short random wait), the pollers hold their batches until the second, and the starts go out at the rate the bench process makes them through one pool (about 100 jobs a second here: section \"Throughput through one pool\", its event loop busy all the time), which is what the p99 measures: 10,000 due in one second would take about 100 s here.",
    "- On AWS: SQS delays are also whole seconds (and a delayed message may arrive later than its delay under load: unverified); Lambda's SQS event source scales batches out (up to its MaximumConcurrency), so a sleeping batch does not hold the others up; the sleep costs its invocation's GB-seconds (about 0.5 s a job on average). The hotspot is bound by the pool counter item: one item takes about 1,000 writes a second, so 10,000 jobs of one pool due in one second start over about 10 s at best (p99 about 10 s); jobs of many pools start in parallel. Jobs beyond 15 minutes add the loader, which sends each 13-15 minutes early with the same whole-second delay: the same lateness, provided the loader keeps up (a run loads 32 jobs at once for at most 15 s, on the order of 20,000 jobs a run on AWS: 100,000 due in one minute take about five of its 2-minute runs, within the 15 minutes ahead it loads them; more than that in one minute would need its concurrency or budget raised).",
    '',
  ];
}

const ENGINE: Record<string, string> = { 'dynamodb-local': 'DynamoDB Local', dynalite: 'dynalite' };
type RaceLevels = NonNullable<BenchResults['race']>['byEngine'][keyof NonNullable<BenchResults['race']>['byEngine']] & object;

function raceSection(r: BenchResults): string[] {
  const race = r.race!;
  const p = race.params;
  const rows = Object.entries(race.byEngine).flatMap(([engine, levels]) =>
    (levels ?? []).map((l) => [
      ENGINE[engine] ?? engine,
      l.rate,
      l.achievedRate,
      l.handoffs,
      `**${l.lostRacesPerHandoff}**`,
      l.lostWithoutTicketPerHandoff,
      l.cancelledWriteUnitsPerHandoff,
      l.ticketsPerHandoff,
      l.maxConcurrent,
      l.handoffP50Ms,
      `**${l.handoffP99Ms}**`,
      l.callP50Ms === undefined ? '-' : `${l.callP50Ms} / ${l.callP99Ms}`,
    ]),
  );
  return [
    '## Hand-off races: many releasers, one pool',
    '',
    `One pool, limit ${p.limit.toLocaleString('en-US')}, full, with a backlog waiting; its runs end at ${p.rates.join(', ')} completions per second in turn (random arrivals, ${p.seconds} s per rate and at least ${p.minHandoffs} hand-offs), each completion handled by one of ${p.releasers} releaser environments (one completion at a time each), which hands the slot on and starts the job itself, as deployed: Sluice's services on the real DynamoDB adapters, the job API a fake. The hand-off is Sluice's: releases at the same moment spread over the oldest waiters by hand-off tickets (docs/protocol.md, "Releases at the same moment"). A lost race is a hand-off transaction cancelled because another releaser had just taken the same waiter (4 items: 8 write units). "Before spreading" counts those lost by an environment that was not spreading yet: it had not lost one on the pool in the last minute, nor read a race mark that young (a loser marks the waiting list, and every release reads the mark with the head of the list: order stays exact while no release of the pool has lost a race lately). Hand-off time: from the completion handled to the pass that went through. One run per engine. DynamoDB request times: the round trip of every attempt through the releasers' client (the SDK's retries and their waits apart): the engine's queue, and the bench process's own. \`npx tsx bench/handoffRaceMain.ts --runs 3\` compares the hand-off as it was (every releaser offering its slot to the oldest waiter first) against the spread, several runs of each on both engines; \`--render bench/handoff-race.json\` prints the last such comparison kept in the repository.`,
    '',
    table(
      [
        'engine',
        'completions/s',
        'achieved/s',
        'hand-offs',
        'lost races per hand-off',
        'before spreading',
        'their write units per hand-off',
        'tickets per hand-off',
        'releasers busy at most',
        'hand-off p50 ms',
        'hand-off p99 ms',
        'DynamoDB request p50 / p99 ms',
      ],
      rows,
      'lrrrrrrrrrrr',
    ),
    '',
  ];
}

function raceLostBound(r: BenchResults): string[] {
  const out: string[] = [];
  for (const [engine, levels] of Object.entries(r.race!.byEngine) as Array<[string, RaceLevels]>) {
    const over = levels.filter((l) => l.lostRacesPerHandoff > 0.05);
    if (over.length === 0) {
      out.push(`- ${ENGINE[engine] ?? engine}: at most 0.05 at every rate.`);
      continue;
    }
    out.push(
      `- ${ENGINE[engine] ?? engine}: over 0.05 at ${over.map((l) => `${l.rate}/s (${l.lostRacesPerHandoff}, ${l.lostRaces} races over ${l.handoffs} hand-offs; ${l.lostWithoutTicketPerHandoff} per hand-off by an environment not spreading yet, ${round1((l.lostRacesPerHandoff - l.lostWithoutTicketPerHandoff) * 1000) / 1000} after it; ${l.maxConcurrent} of ${r.race!.params.releasers} releasers busy at most)`).join(', ')}.`,
    );
  }
  out.push(
    '',
    `An environment spreads once a release of the pool has lost a race in the last minute, its own or another's (told by the race mark its read of the list carries), so the pool pays its first race once, not each of the ${r.race!.params.releasers} environments its own (the "before spreading" share above). What is left after spreading comes from releasers whose reads of the list, a few hand-offs apart, point them at the same waiter; a loser reads the list again before its next try rather than walk into the waiters the releases in flight with it were taking. Each lost race costs 8 write units and a read of the list; none sends a waiter twice.`,
  );
  return out;
}

/** The engine's answer times at 100/s against the lower rates (none in results from before they were measured). */
function callTimes(at100: RaceLevels[number], below: RaceLevels): string {
  if (at100.callP50Ms === undefined) return '';
  const lower = below.filter((l) => l.callP50Ms !== undefined);
  return ` Each DynamoDB request (every attempt, its round trip as the releasers' client saw it) took p50 ${at100.callP50Ms} / p99 ${at100.callP99Ms} ms at 100/s${lower.length > 0 ? `, against ${lower.map((l) => `p50 ${l.callP50Ms} / p99 ${l.callP99Ms} ms at ${l.rate}/s`).join(', ')}` : ''}.`;
}

function raceP99Bound(r: BenchResults): string[] {
  const out: string[] = [];
  for (const [engine, levels] of Object.entries(r.race!.byEngine) as Array<[string, RaceLevels]>) {
    const at100 = levels.find((l) => l.rate === 100);
    const below = levels.filter((l) => l.rate < 100);
    if (!at100) continue;
    out.push(
      `- ${ENGINE[engine] ?? engine}: p99 ${at100.handoffP99Ms} ms at 100/s with a p50 of ${at100.handoffP50Ms} ms, ${at100.maxConcurrent} of ${r.race!.params.releasers} releasers busy at once (achieved ${at100.achievedRate} completions/s; the whole completion, start included, p50 ${at100.completionP50Ms} ms, p99 ${at100.completionP99Ms} ms); below it, ${below.map((l) => `${l.rate}/s p50 ${l.handoffP50Ms} / p99 ${l.handoffP99Ms} ms with ${l.maxConcurrent} busy`).join(', ')}.${callTimes(at100, below)}`,
    );
  }
  out.push(
    '',
    `A hand-off is four calls one after another (the run reference, the job read with the waiters query beside it, the pass; a ticket first when spreading), a few ms each when the engine is idle. When the p50 itself is far above that, every releaser busy at once, the time is the queue in front of the engine: one process (DynamoDB Local's JVM or dynalite's event loop) on a 2-core machine shared with this bench's own process (the releasers, their SDK clients) and with other work (load average ${r.machine.loadAverage.start.join('/')} at the start, ${r.machine.loadAverage.end.join('/')} at the end). Lost races add little here (see the row above). On AWS each call is served by the table's partitions, not one process: the queue is what this machine adds.`,
  );
  return out;
}

function rateBurstBound(r: BenchResults): string[] {
  const all = [r.rateLimit!, ...(r.rateBursts ?? [])];
  return [
    `${all.map((q) => `${q.startsPerSecond}/s x ${q.jobs}: ${pct(q.startsOfAllowed)} of the starts the rate allows, ${q.failedWritesPerStart} refused counter writes per start (${q.counterWritesPerStart} writes), at most ${q.maxStartsInAnySecond} starts in any 1 s`).join('; ')}. Starts are booked 4% further apart than the rate (for the start calls' own latency), so about 96% is the most the first figure can show; a start call more than 100 ms late for its booking is booked again, which a loaded machine makes likelier.`,
  ];
}

function weightsBound(r: BenchResults): string[] {
  const w = r.weights!;
  const t = r.params.weights.runTimes;
  const meanRunMs = t.medianMs * Math.exp((t.sigma * t.sigma) / 2);
  const handoff = r.handoff ? r.handoff.p50Ms : undefined;
  return [
    `Backfill used ${pct(w.backfill.unitUtilization)} of the budget, strict order ${pct(w.strictOrder.unitUtilization)} (all done in ${s1(w.backfill.makespanMs)} against ${s1(w.strictOrder.makespanMs)}); the weight-10 jobs waited ${s1(w.backfill.heaviestMeanWaitMs)} on average with backfill, ${s1(w.strictOrder.heaviestMeanWaitMs)} in strict order (longest ${s1(w.backfill.heaviestLongestWaitMs)} against ${s1(w.strictOrder.heaviestLongestWaitMs)}; the two rounds run one after the other, on a machine whose load changes). Runs here are short (median ${t.medianMs} ms, mean about ${Math.round(meanRunMs)} ms): every end of a run leaves its units idle until the next start, a completion event, a hand-over and a start call later${handoff !== undefined ? ` (the hand-off scenario's p50: ${handoff} ms, ${pct(handoff / (meanRunMs + handoff))} of a mean run and its hand-off, on a pool of limit 1 per unit; a heavy job needs several units freed before it starts, each idle meanwhile)` : ''}, and a blocked head keeps units idle that no waiting job behind it fits in before the head's shadow time. On AWS, with runs of minutes, the gap between runs is a far smaller share: \`npm run bench -- --only weights --weights-median-ms 1500 --weights-jobs 100\` measures it with runs five times as long.`,
    ...weightsModelBound(w.strictOrder, w.backfill),
  ];
}

/** The rule's share against the gap's, from the model of the same jobs (bench/weightsModel.ts); none in older results. */
function weightsModelBound(strict: WeightsRound, backfill: WeightsRound): string[] {
  if (!strict.model || !backfill.model) return [];
  const ms = (x: WeightsRound) => `${x.endToStartMs} ms`;
  const points = (x: number) => (x * 100).toFixed(1);
  const { noGap, atGap } = backfill.model;
  const measured = backfill.unitUtilization;
  const rest =
    atGap >= measured
      ? `${points(atGap - measured)} neither's (the gap's tail, which a median leaves out, and the order jobs reached the pool in)`
      : `the round itself did ${points(measured - atGap)} better than the model at its median gap`;
  return [
    '',
    `Where the missing units go, measured: the same jobs, in the order they were sent (the pool may see them in a slightly different order: a standard queue does not keep it), through the same admission functions the releaser calls (strict order, then \`planBackfill\` over the head and the ${BACKFILL_LOOKAHEAD - 1} waiters behind it when the head does not fit), with no AWS call and no process in between (bench/weightsModel.ts). With units free again the moment a run ends, backfill uses ${pct(noGap)} of the budget and strict order ${pct(strict.model.noGap)}: what the rule itself leaves idle (a blocked head, the tail of the last jobs)${noGap >= WEIGHTS_UTILIZATION_GOAL ? ', at or above the goal on these jobs' : ', under the goal on these jobs'}. With each run's units free again only the gap measured here after its end (the median time from a run's end to the next start: ${ms(backfill)} with backfill, ${ms(strict)} in strict order): ${pct(atGap)} and ${pct(strict.model.atGap)}. Of the ${points(1 - measured)} points of the budget the backfill round left idle, ${points(1 - noGap)} are the rule's, ${points(noGap - atGap)} the median gap's, and ${rest}. The model applies the rule, which never delays the head, and checks nothing of it: the weight-10 jobs' longest wait against strict order's is the bench's check.`,
  ];
}

function hotspotSection(r: BenchResults): string[] {
  const x = r.hotspot!;
  const n = (v: number) => v.toLocaleString('en-US');
  const row = (label: string, side: typeof x.limited) => [
    label,
    `${n(side.started)} of ${n(side.jobs)}`,
    `${n(side.p50LatenessMs)} ms`,
    `**${n(side.p99LatenessMs)} ms**`,
    `${n(side.maxLatenessMs)} ms`,
    `**${side.jobsPerSecond}**`,
    n(side.transactItems),
    side.dynamodbPerJob,
    `${n(side.preparedInMs)} of ${n(side.leadMs)} ms`,
  ];
  return [
    '## Many jobs due in one second: limited and unlimited pools',
    '',
    `${n(x.jobs)} jobs due in the same second, first on a pool with limit 10,000 (each job takes a unit of the pool's one counter item), then on a pool configured \`"unlimited"\` (no counter: each job's take and release write its own record; its holders entry goes to one of 16 shards), on the schedule scenario's stack (${r.params.schedule.pollers} pollers of the job queue), runs of ${r.params.hotspot.runMs} ms, after an unmeasured warm-up second of ${Math.min(200, Math.ceil(x.jobs / 5))} jobs on each pool. The jobs are put where the acquirer's \`schedule\` row leaves a job due within 15 minutes (the record \`scheduled\`, its copy sent with the whole seconds left as its delay) before they are due, so only the due second is measured. Lateness is the simulator's start call minus \`notBefore\`; jobs/s is the jobs over the time from the due second to the last start. The reconciler runs on the stage's schedule (a take that lost every race for the counter parks; the reconciler's fill lets in any such job no release found).`,
    '',
    table(
      ['pool', 'started', 'lateness p50', 'p99', 'max', 'jobs/s', 'transaction items', 'DynamoDB requests a job', 'prepared in'],
      [row('limited (10,000)', x.limited), row('unlimited', x.unlimited)],
      'lllllrrrl',
    ),
    '',
    `Without a limit: **${x.ratio.jobsPerSecond} times the jobs a second**, ${x.ratio.p99Lateness} times the p99 lateness of the limited pool, on the same run. Locally the bench's one process (every function, the simulator, the bus and the pollers share its event loop, beside the emulators on 2 cores) bounds both sides, so the ratio is smaller than on AWS, where the limited pool's bound is one item and the unlimited pool's is Lambda's scaling: what a 30,000-job second takes there is on paper in [docs/benchmark.md](../docs/benchmark.md#many-jobs-due-in-one-second-limited-and-unlimited-pools) (about 2 to 2.5 minutes on a limited pool, about 20 s on an unlimited one with \`acquirerMaxConcurrency\` raised).`,
    '',
  ];
}

function hotspotBound(r: BenchResults): string[] {
  const x = r.hotspot!;
  const u = x.unlimited;
  const l = x.limited;
  const minutes = (jobsPerSecond: number) => (jobsPerSecond > 0 ? Math.round((30_000 / jobsPerSecond / 60) * 10) / 10 : Infinity);
  return [
    `Here the unlimited pool started ${u.jobsPerSecond} jobs a second and the limited one ${l.jobsPerSecond}: 30,000 would take about ${minutes(u.jobsPerSecond)} and ${minutes(l.jobsPerSecond)} minutes a side on this machine, past the bench's 15 minutes, so the run measures ${x.jobs.toLocaleString('en-US')} and the ratio. What bounds both sides here is the bench's one process (Sluice's functions, the simulator, the bus and ${r.params.schedule.pollers} pollers on one event loop; the throughput scenario has its CPU per job) and the emulators beside it on 2 cores, not the pool: the unlimited pool's jobs wrote ${u.transactItems} transaction items and made ${u.dynamodbPerJob} DynamoDB requests a job, against ${l.transactItems} and ${l.dynamodbPerJob} for the limited pool's. On AWS the 30,000-job second is estimated from the published per-partition and Lambda scaling limits in docs/benchmark.md: about 20 s on an unlimited pool (Lambda's SQS scaling with \`acquirerMaxConcurrency\` at 1,000, a table warm for 5,000 writes a second), about 2 to 2.5 minutes on a limited one (its counter item).`,
  ];
}
