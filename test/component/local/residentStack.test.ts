import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { Browser } from 'playwright-core';
import { expiresAfter, SECONDS_PER_DAY, toJobItem } from '../../../shared/adapters/dynamodb/jobItem';
import type { JobRecord } from '../../../shared/ports/jobLedger';
import { launchChromium } from '../../support/browser';
import { cleanEnv, npmStart, type Resident, sluice, startResident } from '../../support/residentStack';
import { waitFor } from '../../support/waitFor';

/**
 * The resident local stack (`npm start -- --serve`) as a user meets it: started by its own entry point in a child
 * process, then driven only by `sluice` commands (bin/sluice.cjs) from a shell with no AWS or Sluice settings but the
 * path of the env file the stack wrote, and by the dashboard in a real headless Chromium.
 */

const ROOT = path.resolve(__dirname, '../../..');
const ARTIFACTS = path.join(ROOT, 'test-results');
let tmp: string;
let envFile: string;
let resident: Resident;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'sluice-resident-'));
  envFile = path.join(tmp, 'local.env');
  // Port 0 (any free one) so a stack a developer runs on the default ports is never in the way; runs of 10 s each (a
  // `sluice` command takes several seconds beside a CPU-bound process: the pool must stay full for a few of them).
  resident = await startResident(
    ['--sqs-port', '0', '--dynamodb-port', '0', '--jobapi-port', '0', '--pool', 'default=2', '--median-ms', '10000', '--sigma', '0'],
    envFile,
  );
}, 90_000);

afterAll(async () => {
  // Ctrl-C: it stops cleanly and takes its env file with it.
  if (resident) {
    expect(await resident.stop()).toBe(0);
    await expect(readFile(envFile, 'utf8')).rejects.toMatchObject({ code: 'ENOENT' });
  }
  await rm(tmp, { recursive: true, force: true });
}, 30_000);

const json = <T>(text: string) => JSON.parse(text) as T;

test('prints the export lines it wrote to its env file; everything is on 127.0.0.1', async () => {
  const expected = Object.entries(resident.vars).map(([name, value]) => `export ${name}='${value}'`);
  // The stack is up once its env file is written; the same lines on its stdout may still be in the pipe.
  const printed = await waitFor('every export line on stdout', () => {
    const lines = resident.stdout().trim().split('\n');
    return lines.length >= expected.length ? lines : undefined;
  });
  expect(printed).toEqual(expected);
  for (const name of ['AWS_ENDPOINT_URL_SQS', 'AWS_ENDPOINT_URL_DYNAMODB', 'AWS_ENDPOINT_URL_APPFLOW', 'AWS_ENDPOINT_URL_GLUE'])
    expect(resident.vars[name]).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(resident.stderr()).toContain('Pools: default (limit 2).');
});

test('a second instance says one is running and exits 1; a port taken by another program is named with its flag', async () => {
  const second = await npmStart(['--serve', '--exports-file', envFile]);
  expect(second.code).toBe(1);
  expect(second.stderr.trim()).toBe(
    `npm start: a local stack is already running (pid ${resident.pid}, ${resident.vars.AWS_ENDPOINT_URL_SQS}, ${resident.vars.AWS_ENDPOINT_URL_DYNAMODB}; its settings are in ${envFile}): use it, or stop it first (Ctrl-C in its terminal, or kill ${resident.pid})`,
  );
  const sqsPort = new URL(resident.vars.AWS_ENDPOINT_URL_SQS!).port;
  const clash = await npmStart(['--serve', '--exports-file', path.join(tmp, 'other.env'), '--sqs-port', sqsPort]);
  expect(clash.code).toBe(1);
  expect(clash.stderr.trim()).toBe(
    `npm start: port ${sqsPort} (SQS emulator) on 127.0.0.1 is in use by another program: stop it, or choose another with --sqs-port N`,
  );
}, 60_000);

test('sluice finds the stack by itself: enqueue your own jobs, watch them run, their records and the pool', async () => {
  const jobs = path.join(tmp, 'jobs.jsonl');
  await writeFile(
    jobs,
    [
      '{"kind":"glue","id":"mine-1","jobName":"nightly"}',
      '{"kind":"appflow","id":"mine-2","flowName":"accounts"}',
      '{"kind":"glue","id":"mine-3","jobName":"nightly"}',
    ].join('\n'),
  );
  const sent = await sluice(envFile, 'enqueue', jobs);
  expect(sent).toMatchObject({ code: 0, stderr: '' });
  expect(sent.stdout).toBe(`sent 3 jobs to ${resident.vars.SLUICE_QUEUE_URL}\n  mine-1\n  mine-2\n  mine-3\n`);

  // Two slots for three jobs of 10 s: the pool is full for a while, and pool list names the holders with their ages.
  const held = await waitFor(
    'two holders',
    async () => {
      const { stdout } = await sluice(envFile, 'pool', 'list', '--json');
      const [pool] = json<Array<{ name: string; inUse: number; held: Array<{ jobId: string; ageMs: number }> }>>(stdout);
      return pool?.held.length === 2 ? pool : undefined;
    },
    60_000,
    100,
  );
  expect(held).toMatchObject({ name: 'default', inUse: 2 });
  for (const holder of held.held) expect(holder.ageMs).toBeGreaterThanOrEqual(0);

  await waitFor('the three jobs to succeed', () => /start .*job mine-3[\s\S]*succeeded .*job mine-3/.test(resident.stderr()), 90_000, 100);
  const shown = await waitFor('job mine-3 succeeded in the ledger', async () => {
    const result = await sluice(envFile, 'jobs', 'show', 'mine-3');
    return result.stdout.includes('state        succeeded') ? result.stdout : undefined;
  });
  expect(shown).toMatch(
    /^job mine-3\n {2}state {8}succeeded\n {2}pool {9}default\n {2}kind {9}glue nightly\n {2}attempts {5}1\n {2}run id {7}jr_/,
  );
  // top --once: one screen of the same (a terminal gets it redrawn every 2 s).
  const top = (await sluice(envFile, 'top', '--once')).stdout;
  expect(top).toMatch(/^sluice top {2}sluice-local {2}\d\d:\d\d:\d\d UTC\n\nPOOL +LIMIT +IN USE +FREE +WAITING\ndefault +2 +\d +\d +0\n/);
  // Each job with the name of what it runs (the Glue job).
  expect(top).toMatch(/RECENT JOBS\nJOB .*\n(.*\n)*mine-3 +default +glue +nightly +succeeded/);
  expect(top).toContain('DEAD-LETTER QUEUE: 0');
  const listed = json<Array<{ jobId: string; state: string }>>(
    (await sluice(envFile, 'jobs', 'list', '--state', 'succeeded', '--json')).stdout,
  );
  expect(listed.map((j) => j.jobId).sort()).toEqual(['mine-1', 'mine-2', 'mine-3']);
  // Locally any name runs; the stack warns, once per reason, about what a deployed stage (dev by default, with Sluice's
  // default patterns) would refuse.
  const warnings = resident
    .stderr()
    .split('\n')
    .filter((line) => / warning +job /.test(line));
  expect(warnings).toHaveLength(2);
  expect(warnings).toEqual(
    expect.arrayContaining([
      expect.stringMatching(
        /job mine-[13]: jobName 'nightly' does not match allowedGlueJobPattern 'sluice-\*': IAM refuses it on stage dev/,
      ),
      expect.stringMatching(/job mine-2: flowName 'accounts' does not match allowedFlowPattern 'sluice-\*': IAM refuses it on stage dev/),
    ]),
  );
  // Each start and end was one line on the stack's terminal.
  for (const id of ['mine-1', 'mine-2', 'mine-3']) {
    expect(resident.stderr()).toMatch(new RegExp(`start .* job ${id} `));
    // A run of 10 s ends no sooner (how much later depends on the machine's load, so only the floor is checked).
    const after = new RegExp(`succeeded .* job ${id} .*after (\\d+\\.\\d) s`).exec(resident.stderr());
    expect(Number(after?.[1])).toBeGreaterThanOrEqual(10);
  }
}, 180_000);

test("enqueue refuses on the spot an override the stack's stage does not allow (a Glue script swapped in by its arguments)", async () => {
  const jobs = path.join(tmp, 'evil.jsonl');
  await writeFile(
    jobs,
    [
      '{"kind":"glue","id":"evil-1","jobName":"nightly","arguments":{"--scriptLocation":"s3://attacker/evil.py"}}',
      '{"kind":"glue","id":"day-1","jobName":"nightly","arguments":{"--day":"2026-11-22"}}',
    ].join('\n'),
  );
  const sent = await sluice(envFile, 'enqueue', jobs);
  expect(sent.code).toBe(1);
  expect(sent.stdout).toBe(`sent 1 job to ${resident.vars.SLUICE_QUEUE_URL}\n  day-1\n`);
  expect(sent.stderr).toBe(
    "rejected 1 spec (not sent):\n  spec 1: override arguments '--scriptLocation' is not allowed on this stage (list '--scriptLocation' in overrides.glue.arguments to allow it)\n",
  );
}, 120_000);

test('a job of an unknown pool is dead-lettered with its reason; after --create, dlq redrive sends it again and it runs', async () => {
  const jobs = path.join(tmp, 'typo.jsonl');
  await writeFile(jobs, '{"kind":"glue","id":"lost-1","pool":"reports","jobName":"weekly"}\n');
  expect((await sluice(envFile, 'enqueue', jobs)).code).toBe(0);
  const letters = await waitFor(
    'the dead letter',
    async () => {
      const found = json<Array<{ jobId: string; reason: string }>>((await sluice(envFile, 'dlq', 'list', '--json')).stdout);
      return found.length > 0 ? found : undefined;
    },
    60_000,
  );
  expect(letters).toEqual([
    expect.objectContaining({
      jobId: 'lost-1',
      pool: 'reports',
      reason:
        "unknown pool 'reports': create it with `sluice pool set-limit reports N --create` (or configure it in the stage's pools), then redrive the job",
    }),
  ]);
  expect(await sluice(envFile, 'pool', 'set-limit', 'reports', '1')).toMatchObject({
    code: 2,
    stderr: expect.stringContaining('add --create'),
  });
  expect(await sluice(envFile, 'pool', 'set-limit', 'reports', '1', '--create')).toMatchObject({ code: 0 });
  expect(await sluice(envFile, 'dlq', 'redrive', '--id', 'lost-1')).toEqual({
    code: 0,
    stdout: 're-sent 1 of 1 dead-lettered job\n  lost-1: sent to the job queue\n',
    stderr: '',
  });
  await waitFor(
    'lost-1 to succeed',
    async () => (await sluice(envFile, 'jobs', 'show', 'lost-1')).stdout.includes('state        succeeded'),
    60_000,
    200,
  );
  expect((await sluice(envFile, 'dlq', 'list')).stdout).toBe('the dead-letter queue is empty\n');
}, 150_000);

describe('the dashboard in headless Chromium', () => {
  let browser: Browser | undefined;
  let stopDashboard: (() => Promise<void>) | undefined;
  afterAll(async () => {
    await browser?.close();
    await stopDashboard?.();
  });
  const setsFile = () => path.join(tmp, 'sets.yml');
  const NIGHT = {
    failed: ['nightly.now-n1.load-accounts', 'nightly.now-n1.load-orders'],
    succeeded: ['nightly.now-n1.report-sales', 'nightly.now-n1.report-stock'],
  };

  /** Changes how the job API simulator ends the runs it starts from now on (its control route, as the fault tests use). */
  const configureRuns = async (behaviour: { outcome?: 'succeeded' | 'failed'; durationMs?: number }) => {
    const res = await fetch(`${resident.vars.AWS_ENDPOINT_URL_GLUE}/__sim/configure`, { method: 'POST', body: JSON.stringify(behaviour) });
    expect(res.status).toBe(200);
  };

  /**
   * Five hours of last night in pool etl (limit 4), as the ledger keeps them: the records of 4 slots' worth of Glue runs
   * of 18 to 55 minutes, one in 7 failed, written as Sluice writes a finished job's item. The stack runs in minutes;
   * these give the day's chart its shape.
   */
  const ETL = { limit: 4, succeeded: 0, failed: 0 };
  async function writeLastNight(): Promise<void> {
    const doc = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        region: resident.vars.AWS_REGION!,
        endpoint: resident.vars.AWS_ENDPOINT_URL_DYNAMODB,
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    );
    const minutes = [25, 40, 18, 55, 32, 47, 21, 36, 29, 51];
    const start = Date.now() - 8 * 3600_000;
    const items: Array<Record<string, unknown>> = [];
    for (let slot = 0; slot < ETL.limit; slot++) {
      for (let at = start + slot * 180_000, n = slot; at < start + 5 * 3600_000; n++) {
        const id = `etl-${slot}-${n}`;
        const endedAt = at + minutes[n % minutes.length]! * 60_000;
        const failed = items.length % 7 === 6;
        const record: JobRecord = {
          jobId: id,
          pool: 'etl',
          kind: 'glue',
          state: failed ? 'failed' : 'succeeded',
          spec: { kind: 'glue', id, pool: 'etl', jobName: `etl-${['orders', 'accounts', 'stock', 'invoices'][slot]}` },
          version: 5,
          attempts: 1,
          firstSeenAt: at - 60_000,
          firstStartAt: at,
          startedAt: at,
          endedAt,
          updatedAt: endedAt,
          executionId: `jr_${id}`,
          startRequested: true,
          ...(failed && { lastError: 'Glue job run failed: <b>OutOfMemoryError</b> \u001b[31min stage 3' }),
        };
        items.push({ ...toJobItem(record), expiresAt: expiresAfter(endedAt, 30 * SECONDS_PER_DAY) });
        ETL[failed ? 'failed' : 'succeeded']++;
        at = endedAt + 30_000;
      }
    }
    for (let i = 0; i < items.length; i += 25)
      await doc.send(
        new BatchWriteCommand({
          RequestItems: { [resident.vars.SLUICE_TABLE!]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) },
        }),
      );
    doc.destroy();
  }

  test('a night: a job set run whose first two jobs fail and last two succeed', async () => {
    expect((await sluice(envFile, 'pool', 'set-limit', 'etl', String(ETL.limit), '--create')).code).toBe(0);
    await writeLastNight();
    // Two pools: the first two jobs start in night-a while the simulator fails every run; night-b, paused until runs
    // succeed again, starts the other two. Which job fails is decided by the pools, not by timing.
    expect((await sluice(envFile, 'pool', 'set-limit', 'night-a', '2', '--create')).code).toBe(0);
    expect((await sluice(envFile, 'pool', 'set-limit', 'night-b', '0', '--create')).code).toBe(0);
    await writeFile(
      setsFile(),
      [
        'sets:',
        '  - name: nightly',
        '    schedule: cron(0 2 * * ? *)',
        '    timezone: Europe/Paris',
        '    jobs:',
        '      - { kind: glue, jobName: load-accounts, pool: night-a }',
        '      - { kind: glue, jobName: load-orders, pool: night-a }',
        '      - { kind: glue, jobName: report-sales, pool: night-b }',
        '      - { kind: glue, jobName: report-stock, pool: night-b }',
      ].join('\n'),
    );
    await configureRuns({ outcome: 'failed', durationMs: 1_000 });
    expect((await sluice(envFile, 'sets', 'run-now', 'nightly', '--id', 'n1', '--file', setsFile())).code).toBe(0);
    const idsOf = async (pool: string, state: string) =>
      json<Array<{ jobId: string }>>((await sluice(envFile, 'jobs', 'list', '--pool', pool, '--state', state, '--json')).stdout)
        .map((j) => j.jobId)
        .sort();
    await waitFor('the night-a jobs to fail', async () => (await idsOf('night-a', 'failed')).join() === NIGHT.failed.join(), 90_000, 500);
    await configureRuns({ outcome: 'succeeded', durationMs: 10_000 });
    expect((await sluice(envFile, 'pool', 'set-limit', 'night-b', '2')).code).toBe(0);
    await waitFor(
      'the night-b jobs to succeed',
      async () => {
        const succeeded = await idsOf('night-b', 'succeeded');
        return NIGHT.succeeded.every((id) => succeeded.includes(id));
      },
      120_000,
      500,
    );
    // What `sluice sets` says of the run: the page must show the same.
    await waitFor(
      'the run counted to its end',
      async () =>
        /^now-n1 .*(4 of 4 jobs ended|2 succeeded, 2 failed of 4)/.test((await sluice(envFile, 'sets', 'runs', 'nightly')).stdout),
      60_000,
      500,
    );
    expect(
      json<{ failedIds: string[] }>((await sluice(envFile, 'sets', 'failed', 'nightly', 'now-n1', '--json')).stdout).failedIds,
    ).toEqual(NIGHT.failed);
  }, 300_000);

  test('shows the pools, holders, waiting jobs and the DLQ; a limit change from the page, confirmed, takes effect', async () => {
    // A paused pool with three jobs waiting gives counts that hold still while the page is read.
    expect((await sluice(envFile, 'pool', 'set-limit', 'batch', '0', '--create')).code).toBe(0);
    const jobs = path.join(tmp, 'batch.jsonl');
    await writeFile(
      jobs,
      ['b-1', 'b-2', 'b-3'].map((id) => JSON.stringify({ kind: 'appflow', id, pool: 'batch', flowName: `flow-${id}` })).join('\n'),
    );
    expect((await sluice(envFile, 'enqueue', jobs)).code).toBe(0);
    await waitFor(
      'three jobs waiting in batch',
      async () => {
        const pools = json<Array<{ name: string; waiting: number }>>((await sluice(envFile, 'pool', 'list', '--json')).stdout);
        return pools.find((p) => p.name === 'batch')?.waiting === 3;
      },
      60_000,
    );

    // `sluice dashboard` as a user starts it: its own process, the local stack found by itself, any free port.
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/sluice.cjs'), 'dashboard', '--port', '0'], {
      cwd: ROOT,
      env: cleanEnv({ SLUICE_LOCAL_ENV_FILE: envFile, SLUICE_JOB_SETS_FILE: setsFile() }),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let dashboardErr = '';
    child.stderr!.on('data', (chunk: Buffer) => (dashboardErr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    stopDashboard = async () => {
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    };
    const [line] = (await Promise.race([
      new Promise((resolve) => readline.createInterface({ input: child.stdout! }).once('line', (l) => resolve([l]))),
      exited.then((code) => Promise.reject(new Error(`sluice dashboard exited with ${code}`))),
    ])) as [string];
    const url = /(http:\/\/127\.0\.0\.1:\d+\/)/.exec(line)![1]!;

    browser = await launchChromium();
    // About as wide as a laptop's browser window: what docs/dashboard.png shows.
    const page = await browser.newPage({ viewport: { width: 1200, height: 1000 } });
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept();
    });
    await page.goto(url);
    const batch = page.locator('#pools tr[data-pool="batch"]');
    await batch.locator('.waiting').filter({ hasText: /^3$/ }).waitFor({ timeout: 60_000 });
    expect(await batch.locator('.limit').textContent()).toBe('0');
    expect(await batch.locator('.in-use').textContent()).toBe('0');
    expect(await page.locator('#pools tr[data-pool="default"] .limit').textContent()).toBe('2');
    // The waiting jobs in the order they will start, the recent jobs with their states, the DLQ empty.
    expect(await page.locator('#waiting tbody tr td:nth-child(3)').allTextContents()).toEqual(['b-1', 'b-2', 'b-3']);
    // Each with the flow it will run.
    expect(await page.locator('#waiting tbody tr td.name').allTextContents()).toEqual(['flow-b-1', 'flow-b-2', 'flow-b-3']);
    expect(await page.locator('#jobs tr[data-job="mine-1"] .state').textContent()).toBe('succeeded');
    expect(await page.locator('#dlq tbody').textContent()).toBe('empty');
    expect(await page.locator('#dlq-count').textContent()).toMatch(/^\(0 messages in the queue;/);
    await mkdir(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard.png'), fullPage: true });

    // The night, as the morning sees it: the set run with its counts and failed jobs, as `sluice sets` has them.
    const run = page.locator('#set-runs tr[data-set="nightly"][data-run="now-n1"]');
    const counts = await Promise.all(['total', 'ended', 'succeeded', 'failed', 'open'].map((c) => run.locator(`.${c}`).textContent()));
    expect(counts).toEqual(['4', '4', '2', '2', '0']);
    expect(await run.locator('.ids').textContent()).toBe(NIGHT.failed.join(', '));
    // The last 24 hours per pool from the job records: the step line of runs in progress under the limit line, the counts.
    const nightA = page.locator('#day tr[data-pool="night-a"]');
    expect(await nightA.locator('svg.day line.limit').getAttribute('data-limit')).toBe('2');
    expect(await nightA.locator('svg.day').getAttribute('aria-label')).toBe(
      'runs in progress in pool night-a over the last 24 h, at most 2 at once; limit 2',
    );
    expect(await nightA.locator('svg.day polyline.in-progress').getAttribute('points')).toMatch(/^(\d+\.\d,\d+\.\d ?){576}$/);
    expect([await nightA.locator('.succeeded').textContent(), await nightA.locator('.failed').textContent()]).toEqual(['0', '2']);
    const nightB = page.locator('#day tr[data-pool="night-b"]');
    expect([await nightB.locator('.succeeded').textContent(), await nightB.locator('.failed').textContent()]).toEqual(['2', '0']);
    // Runs of about 10 s (from the recorded start to the completion: a little less or more, as the machine goes), shown
    // in seconds and counted in the histogram's first bin (under a minute).
    expect(await nightB.locator('.p50').textContent()).toMatch(/^\d+s$/);
    const bins = await nightB
      .locator('svg.bins rect[data-count]')
      .evaluateAll((bars) => bars.map((bar) => Number(bar.getAttribute('data-count'))));
    expect(bins.reduce((a, b) => a + b, 0)).toBe(2);
    expect(bins[0]).toBe(2);
    // Last night in etl, hours ago: at its limit most of the night, its counts, its longest run.
    const etl = page.locator('#day tr[data-pool="etl"]');
    expect(await etl.locator('svg.day').getAttribute('aria-label')).toBe(
      'runs in progress in pool etl over the last 24 h, at most 4 at once; limit 4',
    );
    expect([await etl.locator('.succeeded').textContent(), await etl.locator('.failed').textContent()]).toEqual([
      String(ETL.succeeded),
      String(ETL.failed),
    ]);
    expect(await etl.locator('.max').textContent()).toBe('55m');
    // The state filter: only the failed jobs, then every state again.
    await page.locator('#state-filter').selectOption('failed');
    const failedStates = await page.locator('#jobs tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-state')));
    expect(new Set(failedStates)).toEqual(new Set(['failed']));
    // A reason is text, whatever it holds: markup is not parsed, an escape sequence is not acted on.
    const reason = page.locator('#jobs tr[data-job="etl-0-6"] .error');
    expect(await reason.textContent()).toBe('Glue job run failed: <b>OutOfMemoryError</b> \u001b[31min stage 3');
    expect(await reason.locator('b').count()).toBe(0);
    expect(await page.locator('#jobs tbody tr td:first-child').allTextContents()).toEqual(expect.arrayContaining(NIGHT.failed));
    await page.locator('#state-filter').selectOption('succeeded');
    expect(await page.locator('#jobs tr[data-job="mine-1"] .state').textContent()).toBe('succeeded');
    expect(await page.locator('#jobs tr[data-state="failed"]').count()).toBe(0);
    // Each run links to its page in the AWS console of the stack's region (a Glue job run, an AppFlow flow's runs).
    const region = resident.vars.AWS_REGION!;
    const glueRun = page.locator('#jobs tr[data-job="mine-1"] a.console');
    const runId = (await glueRun.textContent())!;
    expect(runId).toMatch(/^jr_/);
    expect(await glueRun.getAttribute('href')).toBe(
      `https://${region}.console.aws.amazon.com/gluestudio/home?region=${region}#/job/nightly/run/${runId}`,
    );
    expect(await glueRun.getAttribute('rel')).toBe('noopener noreferrer');
    expect(await page.locator('#jobs tr[data-job="mine-2"] a.console').getAttribute('href')).toBe(
      `https://${region}.console.aws.amazon.com/appflow/home?region=${region}#/details/accounts?tab=runHistory`,
    );
    await page.locator('#state-filter').selectOption('');
    // A closer look: the last hour, in buckets of 15 s.
    await page.locator('#window').selectOption('1h');
    expect(await nightA.locator('svg.day').getAttribute('aria-label')).toBe(
      'runs in progress in pool night-a over the last 60 min, at most 2 at once; limit 2',
    );
    expect(await nightA.locator('svg.day polyline.in-progress').getAttribute('points')).toMatch(/^(\d+\.\d,\d+\.\d ?){480}$/);
    expect(await nightA.locator('.failed').textContent()).toBe('2');
    await page.locator('#window').selectOption('24h');
    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-night.png') });
    // SLUICE_UPDATE_DOCS_SCREENSHOT=1: the copy README.md shows (docs/dashboard.png).
    if (process.env.SLUICE_UPDATE_DOCS_SCREENSHOT) await page.screenshot({ path: path.join(ROOT, 'docs', 'dashboard.png') });

    // Raise batch's limit to 2 from the page: it asks first, and then the table has it and two jobs start. The page's
    // refresh is read while the limit is typed (its answer held until then): the rows it brings must not replace the
    // input being typed in.
    let entered!: () => void;
    const inFlight = new Promise<void>((resolve) => (entered = resolve));
    let typed!: () => void;
    const afterTyping = new Promise<void>((resolve) => (typed = resolve));
    await page.route(
      '**/api/state',
      async (route) => {
        entered();
        await afterTyping;
        await route.continue();
      },
      { times: 1 },
    );
    await inFlight;
    const reads = await page.locator('body').getAttribute('data-reads');
    await batch.locator('input').fill('2');
    typed();
    // That read done with (the page counts them on its body): the row is the one typed in, not one it brought.
    await page.locator(`body:not([data-reads="${reads}"])`).waitFor({ state: 'attached' });
    expect(await batch.locator('input').inputValue()).toBe('2');
    await batch.locator('button.set-limit').click();
    // The page says how many waiting jobs its own request let in: two, or fewer when the stack's periodic reconciler,
    // finding free units after the limit was written, let some in first (its fill races the request's). Two start
    // either way (below).
    await page
      .locator('#status')
      .filter({ hasText: /^pool batch: limit 2, [0-2] waiting let in$/ })
      .waitFor({ timeout: 60_000 });
    expect(dialogs).toEqual(['Set the limit of pool batch to 2?']);
    const pool = json<Array<{ name: string; limit: number }>>((await sluice(envFile, 'pool', 'list', '--json')).stdout).find(
      (p) => p.name === 'batch',
    );
    expect(pool?.limit).toBe(2);
    await waitFor(
      'b-1 and b-2 to start',
      () => /start .*job b-1 /.test(resident.stderr()) && /start .*job b-2 /.test(resident.stderr()),
      60_000,
      100,
    );
    await batch.locator('.limit').filter({ hasText: /^2$/ }).waitFor({ timeout: 60_000 });
    await page.screenshot({ path: path.join(ARTIFACTS, 'dashboard-after-limit.png'), fullPage: true });

    // A request of another origin is refused, and its terminal says so (the cross-origin cases: crossOrigin.test.ts).
    const refused = await fetch(`${url}api/state`, { headers: { origin: 'http://another.example' } });
    expect(refused.status).toBe(403);
    await waitFor('the refusal on its terminal', () =>
      dashboardErr.includes('sluice: refused GET /api/state: it came from http://another.example (a web page open in your browser)'),
    );
  }, 300_000);
});
