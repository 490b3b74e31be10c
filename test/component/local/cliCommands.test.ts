import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
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
