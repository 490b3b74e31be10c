import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { reportMessage, ReportType } from '../../../shared/kinds/callback/reports';
import { conformanceOf } from '../../../shared/kinds/kindConformance';
import { KINDS } from '../../../shared/kinds/registry';
import { type Resident, sluice as sluiceIn, startResident } from '../../support/residentStack';
import { waitFor } from '../../support/waitFor';

/**
 * Every `sluice` command through bin/sluice.cjs in a child process, as a user runs it, against the resident local stack
 * (`npm start -- --serve`) found by its env file alone. Runs last ten minutes (sigma 0), so a running job stays running
 * until a command stops it: nothing here waits on a run's own end.
 */

let tmp: string;
let envFile: string;
let resident: Resident;
const sluice = (...args: string[]) => sluiceIn(envFile, ...args);
const json = <T>(text: string) => JSON.parse(text) as T;

beforeAll(async () => {
  tmp = await mkdtemp(path.join(os.tmpdir(), 'sluice-commands-'));
  envFile = path.join(tmp, 'local.env');
  resident = await startResident(
    ['--sqs-port', '0', '--dynamodb-port', '0', '--jobapi-port', '0', '--pool', 'default=8', '--median-ms', '600000', '--sigma', '0'],
    envFile,
  );
}, 90_000);

afterAll(async () => {
  if (resident) expect(await resident.stop()).toBe(0);
  await rm(tmp, { recursive: true, force: true });
}, 30_000);

async function jobsFile(name: string, specs: unknown[]): Promise<string> {
  const file = path.join(tmp, name);
  await writeFile(file, specs.map((s) => JSON.stringify(s)).join('\n'));
  return file;
}

const stateOf = async (id: string) => json<{ state: string }>((await sluice('jobs', 'show', id, '--json')).stdout).state;

test('cancel --stop stops a running job of every kind through its job API; its run’s end ends the job', async () => {
  const ids = KINDS.map((k) => `stop-${k.kind}`);
  const specs = KINDS.map((k) => conformanceOf(k.kind).spec(`stop-${k.kind}`, `stop-${k.kind}-target`));
  expect((await sluice('enqueue', await jobsFile('stop.jsonl', specs))).code).toBe(0);
  await waitFor(
    'a job of every kind running',
    async () => {
      const running = json<Array<{ jobId: string }>>((await sluice('jobs', 'list', '--state', 'running', '--json')).stdout);
      return ids.every((id) => running.some((j) => j.jobId === id));
    },
    90_000,
    200,
  );
  for (const id of ids) {
    const stopped = await sluice('cancel', id, '--stop');
    expect({ id, ...stopped }).toEqual({
      id,
      code: 0,
      stdout: expect.stringMatching(new RegExp(`^stop requested: run \\S+ of job ${id}; its end ends the job`)),
      stderr: '',
    });
  }
  // Each run, stopped, ends as failed (the job API's stopped state), through its completion event as any run's end.
  for (const id of ids)
    expect(
      await waitFor(
        `${id} to end`,
        async () => {
          const state = await stateOf(id);
          return state === 'running' ? undefined : state;
        },
        60_000,
        200,
      ),
    ).toBe('failed');
}, 240_000);

/** Waits until `sluice jobs show ID` says STATE (a job's state moves as the stack acts, never on a timer here). */
const untilState = (id: string, state: string) => waitFor(`${id} ${state}`, async () => (await stateOf(id)) === state, 90_000, 200);

/** Stops a running job, so the pool's slots are there for the next test. */
async function stop(...ids: string[]): Promise<void> {
  for (const id of ids) expect((await sluice('cancel', id, '--stop')).code).toBe(0);
  for (const id of ids) await untilState(id, 'failed');
}

test('help, and a wrong command line exits 2 naming what is wrong', async () => {
  const help = await sluice('--help');
  expect(help).toMatchObject({ code: 0, stderr: '' });
  expect(help.stdout).toMatch(/^Usage: sluice <command> \[options\]\n/);
  expect(await sluice('frobnicate')).toEqual({
    code: 2,
    stdout: '',
    stderr: "sluice: unknown command 'frobnicate'\nRun 'sluice --help' for the commands.\n",
  });
});

test('cancel: a scheduled job never starts (jobs show gives its notBefore); a running one only with --stop', async () => {
  const later = await jobsFile('later.jsonl', [{ kind: 'glue', id: 'later-1', jobName: 'sluice-later' }]);
  // Well ahead, within the year a notBefore may be.
  const at = new Date(Math.floor(Date.now() / 1000) * 1000 + 100 * 86_400_000).toISOString().replace('.000Z', 'Z');
  expect((await sluice('enqueue', later, '--at', at)).code).toBe(0);
  await untilState('later-1', 'scheduled');
  expect((await sluice('jobs', 'show', 'later-1')).stdout).toMatch(new RegExp(`\\n {2}not before +${at} \\(in \\d+d \\d\\dh\\)\\n`));
  expect(await sluice('cancel', 'later-1')).toEqual({
    code: 0,
    stdout: 'cancelled: job later-1 (was scheduled) will never start\n',
    stderr: '',
  });
  expect(await stateOf('later-1')).toBe('cancelled');

  expect((await sluice('enqueue', await jobsFile('run.jsonl', [{ kind: 'glue', id: 'run-1', jobName: 'sluice-run' }]))).code).toBe(0);
  await untilState('run-1', 'running');
  const refused = await sluice('cancel', 'run-1');
  expect(refused.code).toBe(1);
  expect(refused.stdout).toMatch(/^not cancelled: job run-1 is running \(run \S+\); add --stop to stop the run\n$/);
  await stop('run-1');
  // Sent again, it runs nothing, and enqueue says so.
  expect(await sluice('enqueue', path.join(tmp, 'run.jsonl'))).toEqual({
    code: 0,
    stdout: `sent 1 job to ${resident.vars.SLUICE_QUEUE_URL}\n  run-1\n1 already known (ran or running): run-1 (failed): each id runs once, so these run nothing again (send them with new ids to run them again)\n`,
    stderr: '',
  });
}, 180_000);

test('pool set-rate, limit set, limit set-rate: pool list shows them', async () => {
  expect(await sluice('pool', 'set-rate', 'default', '2/s')).toEqual({ code: 0, stdout: 'default: start rate 2 starts/s\n', stderr: '' });
  expect((await sluice('limit', 'set', 'org:acme', '3')).code).toBe(0);
  expect((await sluice('limit', 'set-rate', 'org:acme', '30/m')).code).toBe(0);
  const pools = json<Array<{ name: string; limit: number; startsPerSecond?: number }>>((await sluice('pool', 'list', '--json')).stdout);
  expect(pools.map(({ name, limit }) => ({ name, limit }))).toEqual(
    expect.arrayContaining([
      { name: 'default', limit: 8 },
      { name: 'key/org:acme', limit: 3 },
    ]),
  );
  // The rate as booked: at most what was asked (the store keeps a start interval a little wider than 1/rate).
  const rate = (name: string) => pools.find((p) => p.name === name)!.startsPerSecond!;
  expect([rate('default') > 1.8 && rate('default') <= 2, rate('key/org:acme') > 0.45 && rate('key/org:acme') <= 0.5]).toEqual([true, true]);
  expect((await sluice('pool', 'list')).stdout).toMatch(/^POOL +LIMIT +IN USE +FREE +WAITING +RATE\n/);
  expect(await sluice('pool', 'set-rate', 'default', 'off')).toEqual({ code: 0, stdout: 'default: start rate none\n', stderr: '' });
}, 120_000);

test("a set's jobs are keyed and listed by what they start; sending ids again says they are known; every sets command", async () => {
  const setsFile = path.join(tmp, 'sets.yml');
  await writeFile(
    setsFile,
    [
      'sets:',
      '  - name: nightly-salesforce',
      '    schedule: rate(1 day)',
      '    jobs:',
      '      - { kind: appflow, flowName: salesforce-accounts }',
      '      - { kind: appflow, flowName: salesforce-contacts }',
    ].join('\n'),
  );
  expect(await sluice('sets', 'list', '--file', setsFile)).toEqual({
    code: 0,
    stdout: 'nightly-salesforce  rate(1 day) UTC  2 jobs  last run: none\n',
    stderr: '',
  });
  expect(await sluice('sets', 'run-now', 'nightly-salesforce', '--id', 'rerun-1', '--file', setsFile)).toEqual({
    code: 0,
    stdout: 'nightly-salesforce: run now-rerun-1, 2 jobs enqueued\n',
    stderr: '',
  });
  const [accounts, contacts] = ['salesforce-accounts', 'salesforce-contacts'].map((flow) => `nightly-salesforce.now-rerun-1.${flow}`);
  await untilState(accounts!, 'running');
  await untilState(contacts!, 'running');

  // Listed with what they run: jobs list, pool list's holders, top.
  const listed = (await sluice('jobs', 'list', '--state', 'running')).stdout;
  expect(listed).toMatch(/^JOB +POOL +KIND +NAME +STATE/);
  expect(listed).toMatch(new RegExp(`\\n${accounts!.replace(/\./g, '\\.')} +default +appflow +salesforce-accounts +running `));
  expect((await sluice('pool', 'list')).stdout).toMatch(
    /\ndefault +nightly-salesforce\.now-rerun-1\.salesforce-contacts +appflow +salesforce-contacts +/,
  );
  expect((await sluice('top', '--once')).stdout).toMatch(
    /\nnightly-salesforce\.now-rerun-1\.salesforce-accounts +default +appflow +salesforce-accounts +running/,
  );

  // The same run again: sent, and said to run nothing.
  const again = await sluice('sets', 'run-now', 'nightly-salesforce', '--id', 'rerun-1', '--file', setsFile);
  expect(again.stdout).toBe(
    `nightly-salesforce: run now-rerun-1, 2 jobs sent again (the run existed: each job still runs once)\n2 already known (ran or running): ${accounts} (running), ${contacts} (running): each id runs once, so these run nothing again (send them with new ids to run them again)\n`,
  );
  expect((await sluice('sets', 'runs', 'nightly-salesforce')).stdout).toMatch(/^now-rerun-1 {2}started \S+ {2}0 of 2 jobs ended\n$/);
  await stop(accounts!);
  expect(await sluice('sets', 'failed', 'nightly-salesforce', 'now-rerun-1')).toEqual({ code: 0, stdout: `${accounts}\n`, stderr: '' });
  expect(await sluice('sets', 'pause', 'nightly-salesforce')).toEqual({
    code: 0,
    stdout: "nightly-salesforce: paused (its schedule's fires are skipped)\n",
    stderr: '',
  });
  expect((await sluice('sets', 'list', '--file', setsFile)).stdout).toMatch(/ {2}PAUSED {2}last run: now-rerun-1 /);
  expect(await sluice('sets', 'resume', 'nightly-salesforce')).toEqual({ code: 0, stdout: 'nightly-salesforce: resumed\n', stderr: '' });
  await stop(contacts!);
}, 240_000);

/** A queue writer of the stack's own (the SDK configured by its env file alone), sending what it likes. */
async function sendRaw(queueUrl: string, body: string): Promise<void> {
  const sqs = new SQSClient({
    region: resident.vars.AWS_REGION,
    endpoint: resident.vars.AWS_ENDPOINT_URL_SQS,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  try {
    await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: body }));
  } finally {
    sqs.destroy();
  }
}

test('dlq list shows reasons whole; redrive --all sends the jobs again and keeps what is not a job, naming it', async () => {
  expect(
    (await sluice('enqueue', await jobsFile('typo.jsonl', [{ kind: 'glue', id: 'lost-1', pool: 'reports', jobName: 'weekly' }]))).code,
  ).toBe(0);
  await sendRaw(resident.vars.SLUICE_QUEUE_URL!, 'not json at all');
  const letters = await waitFor(
    'two dead letters',
    async () => {
      const found = json<Array<{ jobId?: string; messageId: string; target?: string }>>((await sluice('dlq', 'list', '--json')).stdout);
      return found.length === 2 ? found : undefined;
    },
    60_000,
    200,
  );
  expect(letters.find((l) => l.jobId === 'lost-1')).toMatchObject({ target: 'weekly' });
  const junk = letters.find((l) => l.jobId === undefined)!;
  const text = (await sluice('dlq', 'list')).stdout;
  expect(text).toMatch(/^JOB +POOL +NAME +AGE +MESSAGE\n/);
  // The reason whole, however it is wrapped.
  expect(text.replace(/\s+/g, ' ')).toContain(
    "unknown pool 'reports': create it with `sluice pool set-limit reports N --create` (or configure it in the stage's pools), then redrive the job",
  );
  expect(text.replace(/\s+/g, ' ')).toContain('message is not JSON: Unexpected token \'o\', "not json at all" is not valid JSON');

  expect((await sluice('pool', 'set-limit', 'reports', '1', '--create')).code).toBe(0);
  const redriven = await sluice('dlq', 'redrive', '--all');
  expect(redriven.code).toBe(1);
  expect(redriven.stdout.split('\n')).toEqual([
    're-sent 1 of 2 dead-lettered jobs',
    expect.stringMatching(/^ {2}(lost-1: sent to the job queue|message \S+: kept in the DLQ: not a job .*)$/),
    expect.stringMatching(/^ {2}(lost-1: sent to the job queue|message \S+: kept in the DLQ: not a job .*)$/),
    '',
  ]);
  expect(redriven.stdout).toContain(
    `  message ${junk.messageId}: kept in the DLQ: not a job (its body is not a JSON object): sending it again would only dead-letter it again\n`,
  );
  await untilState('lost-1', 'running');
  await stop('lost-1');
  // The stack's log said each dead letter in a line of its own, and no function's log line is raw JSON.
  expect(resident.stderr()).toMatch(/ dead {6}job lost-1: unknown pool 'reports'/);
  expect(
    resident
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('{')),
  ).toEqual([]);
}, 180_000);

test("a reason with escape sequences (a callback report's) reaches the terminal inert, and --json keeps it whole", async () => {
  const spec = conformanceOf('callback').spec('evil-1', 'sluice-evil') as Record<string, unknown>;
  expect((await sluice('enqueue', await jobsFile('evil.jsonl', [spec]))).code).toBe(0);
  await untilState('evil-1', 'running');
  // The user's system reports the run failed, with a reason of its choosing: a window title and a screen clear.
  // The token only the user's system has: the simulated system's start message (the simulator's records).
  const records = (await (await fetch(`${resident.vars.AWS_ENDPOINT_URL_LAMBDA}/__sim/records`)).json()) as {
    runs: Array<{ args: { jobId?: string; token?: string } }>;
  };
  const token = records.runs.filter((r) => r.args.jobId === 'evil-1').at(-1)!.args.token!;
  const reason = 'export failed\u001b]0;pwned\u0007\u001b[2J at row 7';
  await sendRaw(resident.vars.SLUICE_CALLBACK_QUEUE_URL!, reportMessage({ type: ReportType.Completed, token, outcome: 'failed', reason }));
  await untilState('evil-1', 'failed');
  for (const args of [
    ['jobs', 'show', 'evil-1'],
    ['jobs', 'list'],
    ['top', '--once'],
  ]) {
    const { code, stdout } = await sluice(...args);
    expect({ args, code }).toEqual({ args, code: 0 });
    expect(stdout).toContain('export failed');
    expect(stdout).not.toContain('\u001b');
    expect(stdout).not.toContain('\u0007');
  }
  const shown = await sluice('jobs', 'show', 'evil-1', '--json');
  expect(shown.stdout).not.toContain('\u001b');
  expect(json<{ lastError: string }>(shown.stdout).lastError).toContain(reason);
}, 120_000);

test('the env file works with the AWS CLI v1 too: AWS_DEFAULT_REGION beside AWS_REGION', async () => {
  const text = await readFile(envFile, 'utf8');
  expect(text).toContain(`\nexport AWS_REGION='${resident.vars.AWS_REGION}'\nexport AWS_DEFAULT_REGION='${resident.vars.AWS_REGION}'\n`);
});
