import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { type CliIo, main } from '../../../shared/cli/main';

// No resident local stack is looked for where a developer's may run (.sluice/local.env).
const NO_LOCAL_STACK = { SLUICE_LOCAL_ENV_FILE: '/nonexistent/sluice-local.env' };

function io(files: Record<string, string> = {}, env: NodeJS.ProcessEnv = { ...NO_LOCAL_STACK }) {
  const out: string[] = [];
  const err: string[] = [];
  const cli: CliIo = {
    stdout: (t) => void out.push(t),
    stderr: (t) => void err.push(t),
    env,
    readInput: async (file) => {
      if (!(file in files)) throw Object.assign(new Error(`ENOENT: no such file or directory, open '${file}'`), { code: 'ENOENT' });
      return files[file]!;
    },
  };
  return { cli, out, err };
}

/** These paths must fail before any AWS client exists. */
const noClients = () => {
  throw new Error('no AWS client may be made here');
};

describe('main without AWS', () => {
  test('--help prints the usage and exits 0', async () => {
    const { cli, out, err } = io();
    expect(await main(['--help'], cli, noClients)).toBe(0);
    expect(out.join('\n')).toMatch(/^Usage: sluice <command>/);
    expect(out.join('\n')).toContain('pool set-limit POOL N');
    expect(err).toEqual([]);
  });

  test('a usage error exits 2 with the reason and a pointer to --help', async () => {
    const { cli, out, err } = io();
    expect(await main(['pool', 'set-limit', 'etl', 'many'], cli, noClients)).toBe(2);
    expect(out).toEqual([]);
    expect(err.join('\n')).toMatch(/limit must be a whole number.*\n.*sluice --help/s);
  });

  test('a missing file fails (exit 1) before any AWS call', async () => {
    const { cli, err } = io();
    expect(await main(['enqueue', 'nope.jsonl', '--queue-url', 'https://q'], cli, noClients)).toBe(1);
    expect(err.join('\n')).toBe('sluice: cannot read nope.jsonl: no such file (ENOENT)');
  });

  test('a malformed JSONL line fails (exit 1) before any AWS call, naming the line', async () => {
    const { cli, err } = io({ 'jobs.jsonl': '{"kind":"glue","jobName":"a"}\n{oops\n' });
    expect(await main(['enqueue', 'jobs.jsonl', '--queue-url', 'https://q'], cli, noClients)).toBe(1);
    expect(err.join('\n')).toContain('line 2 is not JSON');
  });

  test('JSONL line numbers count every line of the file, blank ones too', async () => {
    const { cli, err } = io({ 'jobs.jsonl': '{"kind":"glue","jobName":"a"}\n\n\r\n{"kind":"glue","jobName":"b"}\n\n{oops\n' });
    expect(await main(['enqueue', 'jobs.jsonl', '--queue-url', 'https://q'], cli, noClients)).toBe(1);
    expect(err).toEqual(['sluice: line 6 is not JSON: {oops']);
  });

  test('a directory or an unreadable file names the path and why, before any AWS call', async () => {
    const failing = (code: string) => ({
      ...io().cli,
      readInput: () => Promise.reject(Object.assign(new Error(`${code}: something, read`), { code })),
    });
    for (const [code, why] of [
      ['EISDIR', 'it is a directory'],
      ['EACCES', 'permission denied'],
    ]) {
      const errors: string[] = [];
      const cli = { ...failing(code!), stderr: (t: string) => void errors.push(t) };
      expect(await main(['enqueue', 'some/jobs'], cli, noClients)).toBe(1);
      expect(errors).toEqual([`sluice: cannot read some/jobs: ${why} (${code})`]);
    }
  });

  test('no table, no stage: exit 2 saying what to give', async () => {
    const { cli, err } = io();
    const clients = () => ({ sqs: {} as never, doc: {} as never, close() {} });
    expect(await main(['pool', 'list'], cli, clients)).toBe(2);
    expect(err.join('\n')).toBe(
      'sluice: which Sluice? give --table NAME (or SLUICE_TABLE), or --stage STAGE, or start the local stack (npm start -- --serve)',
    );
  });

  test('an AWS error is one line with its name and a hint, exit 1, and the clients are closed', async () => {
    const { cli, err } = io();
    let closed = false;
    const failing = Object.assign(new Error('Requested resource not found'), { name: 'ResourceNotFoundException' });
    const doc = DynamoDBDocumentClient.from(
      new DynamoDBClient({ region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } }),
    );
    mockClient(doc).onAnyCommand().rejects(failing);
    const clients = () => ({ sqs: {} as never, doc, close: () => void (closed = true) });
    expect(await main(['pool', 'list', '--table', 'sluice-nope'], cli, clients)).toBe(1);
    expect(err).toEqual([
      'sluice: ResourceNotFoundException: Requested resource not found (is the table name or stage right, and the region?)',
    ]);
    expect(closed).toBe(true);
  });
});

test('an empty file sends nothing and makes no AWS call', async () => {
  const { cli, out } = io({ 'empty.jsonl': '\n\n' });
  expect(await main(['enqueue', 'empty.jsonl'], cli, noClients)).toBe(0);
  expect(out).toEqual(['no job specs in empty.jsonl: nothing sent']);
});
